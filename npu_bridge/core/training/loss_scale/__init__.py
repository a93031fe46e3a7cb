"""Loss scaling as on Ascend: loss-scale managers, overflow detection and the optimizers that use them."""
