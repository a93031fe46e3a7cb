"""Kits of JPEG images described by annotation files: Pascal VOC, COCO and text lists of image paths and labels.

Each writes a handful of 96x96 random-pixel JPEGs and the files that describe them, in the layout the datasets'
own loaders read; ``data_kits.KITS`` says which code picks which.
"""

import io
import json
import os

import numpy as np

IMAGES = 16
VOC_CLASSES = (
    "aeroplane",
    "bicycle",
    "bird",
    "boat",
    "bottle",
    "bus",
    "car",
    "cat",
    "chair",
    "cow",
    "diningtable",
    "dog",
    "horse",
    "motorbike",
    "person",
    "pottedplant",
    "sheep",
    "sofa",
    "train",
    "tvmonitor",
)
# The list files text-list loaders name, each given "path label" lines
LIST_NAMES = (
    "train.txt",
    "val.txt",
    "test.txt",
    "trainval.txt",
    "train_data.txt",
    "test_data.txt",
    "train_list.txt",
    "val_list.txt",
    "test_list.txt",
)


def jpeg(rng, size=96):
    """The bytes of a size x size JPEG of random pixels."""
    from PIL import Image

    pixels = rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=80)
    return buffer.getvalue()


def _box(rng, size=96):
    x0, y0 = (int(v) for v in rng.integers(1, size // 2, size=2))
    x1, y1 = (int(v) for v in rng.integers(size // 2 + 8, size - 1, size=2))
    return x0, y0, x1, y1


def _voc_annotation(name, boxes):
    objects = "".join(
        f"<object><name>{label}</name><pose>Unspecified</pose><truncated>0</truncated><difficult>0</difficult>"
        f"<bndbox><xmin>{x0}</xmin><ymin>{y0}</ymin><xmax>{x1}</xmax><ymax>{y1}</ymax></bndbox></object>"
        for label, (x0, y0, x1, y1) in boxes
    )
    return (
        f"<annotation><folder>VOC2007</folder><filename>{name}.jpg</filename>"
        "<size><width>96</width><height>96</height><depth>3</depth></size><segmented>0</segmented>"
        f"{objects}</annotation>\n"
    )


def voc(root, rng):
    """Pascal VOC at the data folder's top (``ImageSets/Main/*.txt``, ``JPEGImages``, ``Annotations``,
    ``SegmentationClass``), with ``VOCdevkit/VOC2007``, ``VOCdevkit/VOC2012``, ``VOC2007`` and ``VOC2012`` leading
    to it, as loaders look for it at any of these."""
    from PIL import Image

    names = [f"{2007 + i % 2}_{i:06d}" for i in range(IMAGES)]
    for folder in ("JPEGImages", "Annotations", "SegmentationClass", "SegmentationObject"):
        os.makedirs(os.path.join(root, folder))
    os.makedirs(os.path.join(root, "ImageSets", "Main"))
    os.makedirs(os.path.join(root, "ImageSets", "Segmentation"))
    for index, name in enumerate(names):
        with open(os.path.join(root, "JPEGImages", name + ".jpg"), "wb") as f:
            f.write(jpeg(rng))
        boxes = [(VOC_CLASSES[(index + k) % len(VOC_CLASSES)], _box(rng)) for k in range(2)]
        with open(os.path.join(root, "Annotations", name + ".xml"), "w") as f:
            f.write(_voc_annotation(name, boxes))
        mask = np.zeros((96, 96), np.uint8)
        x0, y0, x1, y1 = boxes[0][1]
        mask[y0:y1, x0:x1] = 1 + index % len(VOC_CLASSES)
        for folder in ("SegmentationClass", "SegmentationObject"):
            Image.fromarray(mask, mode="L").save(os.path.join(root, folder, name + ".png"))
    splits = {"train": names[: IMAGES // 2], "val": names[IMAGES // 2 :], "trainval": names, "test": names}
    for split, members in splits.items():
        for sets in ("Main", "Segmentation"):
            with open(os.path.join(root, "ImageSets", sets, split + ".txt"), "w") as f:
                f.write("\n".join(members) + "\n")
        for label in VOC_CLASSES:  # the per-class lists: "name 1" (present) or "name -1"
            with open(os.path.join(root, "ImageSets", "Main", f"{label}_{split}.txt"), "w") as f:
                f.write("".join(f"{m} {1 if i % 2 else -1}\n" for i, m in enumerate(members)))
    os.mkdir(os.path.join(root, "VOCdevkit"))
    for year in ("VOC2007", "VOC2012"):
        os.symlink("..", os.path.join(root, "VOCdevkit", year))
        os.symlink(".", os.path.join(root, year))


def coco(root, rng):
    """COCO 2014 and 2017: ``annotations/instances_*.json`` and ``person_keypoints_*.json`` (boxes, polygons,
    17 keypoints) for ``train2017/``, ``val2017/``, ``train2014/``, ``val2014/`` images named by id."""
    categories = [{"id": i, "name": f"class{i}", "supercategory": "thing"} for i in range(1, 11)]
    categories[0].update(
        name="person",
        keypoints=[f"k{i}" for i in range(17)],
        skeleton=[[i, i + 1] for i in range(1, 17)],
    )
    os.makedirs(os.path.join(root, "annotations"))
    for year in ("2017", "2014"):
        for split in ("train", "val"):
            folder = f"{split}{year}"
            os.makedirs(os.path.join(root, folder))
            images, objects = [], []
            for index in range(IMAGES):
                image_id = index + 1
                name = f"{image_id:012d}.jpg" if year == "2017" else f"COCO_{folder}_{image_id:012d}.jpg"
                with open(os.path.join(root, folder, name), "wb") as f:
                    f.write(jpeg(rng))
                images.append({"id": image_id, "file_name": name, "width": 96, "height": 96})
                x0, y0, x1, y1 = _box(rng)
                keypoints = []
                for _ in range(17):
                    keypoints += [int(rng.integers(x0, x1)), int(rng.integers(y0, y1)), 2]
                objects.append(
                    {
                        "id": image_id,
                        "image_id": image_id,
                        "category_id": 1 + index % 10 if index % 2 else 1,
                        "bbox": [x0, y0, x1 - x0, y1 - y0],
                        "area": float((x1 - x0) * (y1 - y0)),
                        "iscrowd": 0,
                        "segmentation": [[x0, y0, x1, y0, x1, y1, x0, y1]],
                        "keypoints": keypoints,
                        "num_keypoints": 17,
                    }
                )
            content = {"info": {}, "licenses": [], "images": images, "annotations": objects, "categories": categories}
            for kind in ("instances", "person_keypoints"):
                with open(os.path.join(root, "annotations", f"{kind}_{folder}.json"), "w") as f:
                    json.dump(content, f)


def image_lists(root, rng, home):
    """Text lists of images and labels (``train.txt``, ``trainval.txt``, ``train_data.txt``, ...; see
    ``LIST_NAMES``): ``<path> <label>`` lines, the path absolute in ``home``, the folder root ends up as (it exists
    whether a loader joins it to its data folder or opens it as it is), the label in 0..9, for JPEGs in ``images/``."""
    os.makedirs(os.path.join(root, "images"))
    lines = []
    for index in range(IMAGES):
        path = os.path.join(root, "images", f"image_{index:04d}.jpg")
        with open(path, "wb") as f:
            f.write(jpeg(rng))
        lines.append(f"{os.path.join(os.path.realpath(home), 'images', os.path.basename(path))} {index % 10}\n")
    for name in LIST_NAMES:
        with open(os.path.join(root, name), "w") as f:
            f.writelines(lines)
