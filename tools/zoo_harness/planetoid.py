"""The planetoid kit: the citation graphs Cora, CiteSeer and PubMed in the files of Kipf's GCN / Planetoid layout
(``ind.<name>.x``, ``.y``, ``.tx``, ``.ty``, ``.allx``, ``.ally``, ``.graph``, ``.test.index``), which GCN, GAT,
VGAE and their kin read with ``pickle.load(f, encoding='latin1')``.

Each graph has Cora's split sizes (140 labelled nodes, 1,708 training nodes, 1,000 test nodes, 2,708 in all; the
loaders take the 500 after the labelled ones for validation) and its data set's feature and class counts, so a
model sized from the data builds as with the real one. Features are sparse binary rows, labels one-hot, the graph
a dict of adjacency lists (each node linked to its neighbours in a ring and to two random nodes).
"""

import os
import pickle

import numpy as np

DATASETS = {"cora": (1433, 7), "citeseer": (3703, 6), "pubmed": (500, 3)}
LABELLED, TRAINING, TEST = 140, 1708, 1000


def _features(rows, columns, rng):
    import scipy.sparse as sp

    dense = (rng.random((rows, columns)) < 0.01).astype(np.float32)
    dense[np.arange(rows), rng.integers(0, columns, rows)] = 1.0  # no empty row (loaders normalize by row sums)
    return sp.csr_matrix(dense)


def _labels(rows, classes, rng):
    return np.eye(classes, dtype=np.int32)[rng.integers(0, classes, rows)]


def _graph(nodes, rng):
    graph = {i: [(i - 1) % nodes, (i + 1) % nodes] for i in range(nodes)}
    for i in range(nodes):
        for j in rng.integers(0, nodes, 2).tolist():
            if j != i:
                graph[i].append(j)
                graph[j].append(i)
    return graph


def write(root, rng):
    """Writes the eight files of each data set in ``DATASETS`` into root."""
    nodes = TRAINING + TEST
    for name, (columns, classes) in DATASETS.items():
        allx, ally = _features(TRAINING, columns, rng), _labels(TRAINING, classes, rng)
        objects = {
            "x": allx[:LABELLED],
            "y": ally[:LABELLED],
            "tx": _features(TEST, columns, rng),
            "ty": _labels(TEST, classes, rng),
            "allx": allx,
            "ally": ally,
            "graph": _graph(nodes, rng),
        }
        for suffix, value in objects.items():
            with open(os.path.join(root, f"ind.{name}.{suffix}"), "wb") as f:
                pickle.dump(value, f, protocol=2)
        order = rng.permutation(np.arange(TRAINING, nodes))  # the real files list the test nodes unsorted
        with open(os.path.join(root, f"ind.{name}.test.index"), "w") as f:
            f.write("".join(f"{i}\n" for i in order))
