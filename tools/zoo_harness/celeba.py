"""The celeba kit: CelebA's aligned-and-cropped release as its loaders read it (StarGAN, STGAN).

``write`` makes, at the top of the data folder, ``list_attr_celeba.txt`` (the image count, the 40 attribute names
in CelebA's order, then ``000001.jpg -1  1 ...`` for every image), ``list_eval_partition.txt`` (CelebA's split:
0 train, 1 val, 2 test) and ``identity_CelebA.txt``, and ``img_align_celeba/`` with one 178x218 JPEG per image.
It lists all of CelebA's 202,599 images, since loaders slice the list at CelebA's own offsets (STGAN validates on
``[182000:182637]``, StarGAN shuffles it and takes 2,000 for testing): ``DISTINCT`` random-pixel images are encoded
and the others are hard links to them, so the folder holds a few hundred KB of pixels. The folder is linked whole
into each data folder (``WHOLE_FOLDERS``), not file by file. ``CelebA/``, ``Img/``, ``Anno/``, ... lead back to the
top, ``images/`` to the image folder.
"""

import io
import os

import numpy as np

COUNT = 202599
DISTINCT = 16
WIDTH, HEIGHT = 178, 218
IDENTITIES = 10177
# CelebA's split: the first 162,770 images train, the next 19,867 validate, the rest test
VAL_START, TEST_START = 162770, 182637
ATTRIBUTES = (
    "5_o_Clock_Shadow Arched_Eyebrows Attractive Bags_Under_Eyes Bald Bangs Big_Lips Big_Nose Black_Hair Blond_Hair "
    "Blurry Brown_Hair Bushy_Eyebrows Chubby Double_Chin Eyeglasses Goatee Gray_Hair Heavy_Makeup High_Cheekbones "
    "Male Mouth_Slightly_Open Mustache Narrow_Eyes No_Beard Oval_Face Pale_Skin Pointy_Nose Receding_Hairline "
    "Rosy_Cheeks Sideburns Smiling Straight_Hair Wavy_Hair Wearing_Earrings Wearing_Hat Wearing_Lipstick "
    "Wearing_Necklace Wearing_Necktie Young"
).split()
IMAGE_FOLDER = "img_align_celeba"
WHOLE_FOLDERS = (IMAGE_FOLDER,)
ALIASES = ("data", "datasets", "celeba", "CelebA", "celebA", "CelebA_nocrop", "Img", "Anno", "Eval")


def _names(count):
    """The file names ``000001.jpg`` ... as an array of fixed-width byte strings."""
    return np.char.add(np.char.zfill(np.arange(1, count + 1).astype("S6"), 6), b".jpg")


def _attribute_rows(names, rng):
    """``name -1  1 ...`` lines: each value is " 1" or "-1" after a space, as in CelebA's file."""
    count = len(names)
    rows = np.full((count, 10 + 3 * len(ATTRIBUTES) + 1), ord(" "), dtype=np.uint8)
    rows[:, :10] = np.frombuffer(names.tobytes(), dtype=np.uint8).reshape(count, 10)
    negative = rng.random((count, len(ATTRIBUTES))) < 0.6
    rows[:, 11::3][:, : len(ATTRIBUTES)] = np.where(negative, ord("-"), ord(" "))
    rows[:, 12::3][:, : len(ATTRIBUTES)] = ord("1")
    rows[:, -1] = ord("\n")
    return rows.tobytes()


def _jpeg(rng):
    from PIL import Image

    buffer = io.BytesIO()
    pixels = rng.integers(0, 256, size=(HEIGHT, WIDTH, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=75)
    return buffer.getvalue()


def _lines(names, values):
    return b"".join(name + b" " + str(value).encode() + b"\n" for name, value in zip(names.tolist(), values.tolist()))


def write(root, rng, count=COUNT):
    """Writes the files above into root, ``count`` images (CelebA's by default)."""
    names = _names(count)
    with open(os.path.join(root, "list_attr_celeba.txt"), "wb") as f:
        f.write(f"{count}\n{' '.join(ATTRIBUTES)} \n".encode())
        f.write(_attribute_rows(names, rng))
    index = np.arange(count)
    with open(os.path.join(root, "list_eval_partition.txt"), "wb") as f:
        f.write(_lines(names, (index >= VAL_START).astype(int) + (index >= TEST_START)))
    with open(os.path.join(root, "identity_CelebA.txt"), "wb") as f:
        f.write(_lines(names, rng.integers(1, IDENTITIES + 1, size=count)))
    folder = os.path.join(root, IMAGE_FOLDER)
    os.mkdir(folder)
    for i, name in enumerate(names.tolist()):
        path = os.path.join(folder, name.decode())
        if i < DISTINCT:
            with open(path, "wb") as f:
                f.write(_jpeg(rng))
        else:
            os.link(os.path.join(folder, names[i % DISTINCT].decode()), path)
    os.symlink(IMAGE_FOLDER, os.path.join(root, "images"))
    for name in ALIASES:
        os.symlink(".", os.path.join(root, name))
