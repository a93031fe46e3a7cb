"""``tf.contrib.cloud`` for the TF1 mode: ``BigtableClient``, ``BigtableTable`` and ``BigQueryReader`` are accepted
(importing and naming them works) but raise ``NotAvailableError`` when constructed: they need Google Cloud Bigtable /
BigQuery, which this emulator has no client for."""

from npu_bridge.core.runtime.errors import NotAvailableError

__all__ = ["BigQueryReader", "BigtableClient", "BigtableTable"]


class _GoogleCloudService:
    """A ``tf.contrib.cloud`` class bound to a Google Cloud service: constructing it raises."""

    _service = ""

    def __init__(self, *args, **kwargs):
        raise NotAvailableError(
            f"tf.contrib.cloud.{type(self).__name__} needs {self._service}, which is not available in npu_bridge's "
            "TF1 mode (it runs off Google Cloud and has no client for the service); read the data with another "
            "input pipeline (tf.data from files)"
        )


class BigtableClient(_GoogleCloudService):
    """``tf.contrib.cloud.BigtableClient(project_id, instance_id, ...)``: needs Google Cloud Bigtable."""

    _service = "Google Cloud Bigtable"


class BigtableTable(_GoogleCloudService):
    """``tf.contrib.cloud.BigtableTable``: needs Google Cloud Bigtable."""

    _service = "Google Cloud Bigtable"


class BigQueryReader(_GoogleCloudService):
    """``tf.contrib.cloud.BigQueryReader(project_id, dataset_id, table_id, ...)``: needs Google Cloud BigQuery."""

    _service = "Google Cloud BigQuery"
