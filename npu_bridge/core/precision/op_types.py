"""Ascend op type names in precision files (modify_mixlist, customize_dtypes) and their TensorFlow names, both ways."""

# Ascend op types whose TensorFlow op type has another name; every other name is the same in both.
ASCEND_TO_TF_OP = {
    "MatMulV2": "MatMul",
    "SoftmaxV2": "Softmax",
    "ReduceSum": "Sum",
    "ReduceSumD": "Sum",
    "ReduceMean": "Mean",
    "ReduceMeanD": "Mean",
    "ReduceMax": "Max",
    "ReduceMaxD": "Max",
    "ReduceMin": "Min",
    "ReduceMinD": "Min",
    "ReduceProd": "Prod",
    "ReduceProdD": "Prod",
    "Conv2DBackpropInputD": "Conv2DBackpropInput",
    "Conv2DBackpropFilterD": "Conv2DBackpropFilter",
    "DepthwiseConv2D": "DepthwiseConv2dNative",
}


def tf_op_type(ascend_type):
    """Returns the TensorFlow op type for an Ascend op type name."""
    return ASCEND_TO_TF_OP.get(ascend_type, ascend_type)


def ascend_op_type(tf_type):
    """Returns the Ascend op type a precision file names for a TensorFlow op type (the first Ascend name that maps to
    it; the TensorFlow name when none does): ``tf_op_type(ascend_op_type(t)) == t``."""
    return next((ascend for ascend, tf in ASCEND_TO_TF_OP.items() if tf == tf_type), tf_type)
