"""The image-globs kit: folders of images where the loader's ``glob`` patterns look for them.

``spec(code)`` reads the ``glob(...)`` / ``glob.glob(...)`` / ``tf.io.gfile.glob(...)`` calls whose pattern ends in
an image name (``*.jpg``, ``*.png``, ``*.*``, ``*``): the folder is the call's quoted path parts in order
(``glob(args.data_path + "/our485/low/*")`` is ``our485/low``; ``glob('{}/*.*'.format(dir + '/trainA'))`` is
``trainA``; ``os.path.join(root, 'train', '*.png')`` is ``train``; ``glob(datapath)`` reads the last assignment
to ``datapath`` before it), format fields (``{}``, ``%s``) left out. A script argument joined in front of a folder
(``self.dataset_dir + '/trainA'``) whose default is a bare folder name (``--dataset_dir`` ``default='avatar_data'``)
may be the data path itself (the wrapper passes it) or a folder under it (the wrapper does not): both folders get
images. Each folder gets ``IMAGES`` random-pixel 96x96 images of the pattern's suffix, spelled as the pattern spells it
(``*.JPEG`` gets ``.JPEG`` files; for ``*`` and ``*.*``: PNG when the code decodes PNGs only, else JPEG), and as
many more as the loader slices off the sorted list (``sorted(glob(...))[:MAX_TRAIN_IMAGES]``, with
``MAX_TRAIN_IMAGES = 400``: 416; at most 1,000). A bare ``*``
at the data folder's top (which matches any file) and an author's absolute path (``/home/...``) are not followed.
"""

import io
import os
import re

import call_text
import numpy as np

IMAGES = 16
_MOST_IMAGES = 1000
_CALL = re.compile(r"\bglob(?:\.glob|\.iglob)?\s*\(")
_LITERAL = re.compile(r"""['"]([^'"\n]*)['"]""")
_SUFFIXES = {"jpg": "JPEG", "jpeg": "JPEG", "png": "PNG", "bmp": "BMP", "JPG": "JPEG", "JPEG": "JPEG", "PNG": "PNG"}
_PATTERN = re.compile(r"(?:^|[/\\}])\*(?:\.(\*|jpg|jpeg|png|bmp|JPG|JPEG|PNG))?$")
_EXTENSIONS = {"JPEG": "jpg", "PNG": "png", "BMP": "bmp"}  # of the files a pattern without a suffix matches
_MACHINE_PATH = re.compile(r"^/(home|root|mnt|usr|opt|tmp|cache|data\d*|npu)/")  # an author's own absolute path


def _clean(part):
    return [p for p in re.split(r"[/\\]+", part) if p and not re.search(r"[{}%*?\[\]]|^\.\.?$", p)]


def _count(code, end):
    """Images a folder needs: more than the loader slices off (``sorted(glob(...))[:MAX_TRAIN_IMAGES]``)."""
    sliced = re.match(r"(?:\s*\))*\s*\[\s*(\w*)\s*:\s*(\w*)\s*\]", code[end : end + 80])
    limit = 0
    for bound in sliced.groups() if sliced else ():
        value = bound if bound.isdigit() else re.search(rf"(?<!\w){bound}\s*=\s*(\d+)\b", code) if bound else None
        value = value if isinstance(value, str) or value is None else value.group(1)
        limit = max(limit, int(value) if value else 0)
    return min(IMAGES + limit, _MOST_IMAGES)


def _assigned(code, arguments, before):
    """The right-hand side of the last assignment before ``before`` to the name the call's arguments start with
    (``datapath = ('%s/train/*.jpg' % (args.data_path))`` for ``glob(datapath.format(name))``), or ""."""
    name = re.match(r"\s*([A-Za-z_]\w*)\s*(?:[.,)%]|$)", arguments)
    if not name or name.group(1) in ("os", "self"):
        return ""
    found = list(re.finditer(rf"(?m)^[ \t]*{name.group(1)}[ \t]*=(?!=)([^\n]*)", code[:before]))
    return found[-1].group(1) if found else ""


_JOINED = re.compile(r"\b(?:self|args|FLAGS|flags|opt|opts|config|cfg)\.(\w+)\s*\+\s*['\"]")


def _bare_default(code, name):
    """The default of script argument ``name`` when it is a bare folder name (``avatar_data``), else None."""
    for pattern in (
        rf"add_argument\(\s*['\"]--{name}['\"][^()]*?default\s*=\s*['\"]([A-Za-z_][\w\-]*)['\"]",
        rf"DEFINE_string\(\s*['\"]{name}['\"]\s*,\s*['\"]([A-Za-z_][\w\-]*)['\"]",
    ):
        found = re.search(pattern, code)
        if found:
            return found.group(1)
    return None


def spec(code):
    """``{"folders": [[relative folder, image format, count, file extension], ...]}`` for the image globs in code,
    or None."""
    folders = []
    unnamed = "PNG" if "decode_png" in code and "decode_jpeg" not in code else "JPEG"  # the format of ``*``
    for match in _CALL.finditer(code):
        arguments = call_text.call_arguments(code, match.end(), 400) or ""
        literals = _LITERAL.findall(arguments) or _LITERAL.findall(_assigned(code, arguments, match.start()))
        wild = [lit for lit in literals if _PATTERN.search(lit)]
        if len(wild) != 1 or any(_MACHINE_PATH.search(lit) for lit in literals):
            continue
        if wild[0] == "*" and literals[-1] is not wild[0]:
            continue  # ``os.path.join(root, '*', 'work_dir')``: a folder of any name, not images
        suffix = _PATTERN.search(wild[0]).group(1)
        kind = _SUFFIXES.get(suffix, unnamed)
        parts = []
        for literal in literals:
            if literal is wild[0]:
                parts += _clean(literal.rsplit("*", 1)[0])
            elif not re.fullmatch(r"[\w\-./]*", literal) or "." in os.path.basename(literal):
                continue  # not a folder name (an extension, a separator, text)
            else:
                parts += _clean(literal)
        if not parts and suffix in (None, "*"):
            continue  # every file of the data folder, images or not
        extension = suffix if suffix not in (None, "*") else _EXTENSIONS[kind]  # glob's match is case-sensitive
        count = _count(code, match.end() + len(arguments))
        joined = _JOINED.search(arguments)
        prefix = _bare_default(code, joined.group(1)) if joined else None
        for folder in [parts] + ([[prefix, *parts]] if prefix and prefix not in parts else []):
            entry = ["/".join(folder), kind, count, extension]
            same = next((e for e in folders if e[:2] == entry[:2] and e[3] == extension), None)
            if same is None:
                folders.append(entry)
            else:
                same[2] = max(same[2], entry[2])
    return {"folders": folders} if folders else None


def _image(rng, kind):
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, size=(96, 96, 3), dtype=np.uint8)).save(buffer, format=kind)
    return buffer.getvalue()


def write(root, rng, spec):
    """Writes ``IMAGES`` images into each folder ``spec`` (from the function ``spec``) names, under root."""
    for folder, kind, count, extension in spec["folders"]:
        path = os.path.join(root, folder)
        os.makedirs(path, exist_ok=True)
        for index in range(count):
            name = os.path.join(path, f"image_{index:04d}.{extension}")
            if not os.path.exists(name):
                with open(name, "wb") as f:
                    f.write(_image(rng, kind))
