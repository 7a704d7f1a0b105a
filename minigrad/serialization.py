"""``save`` / ``load`` for checkpoints (state dicts), in a format that never unpickles.

A checkpoint is a zip archive (entries stored uncompressed) holding:

- ``manifest.json``: the structure of the saved object as a tree of typed
  nodes: ``{"type": "dict", "items": [[key, value], ...]}``, ``"list"``,
  ``"tuple"``, ``"str"``, ``"int"``, ``"float"`` (its ``repr``, so NaN and
  infinities survive), ``"bool"``, ``"none"``, and ``"tensor"`` / ``"array"`` /
  ``"numpy_scalar"`` nodes naming an array entry with its dtype and shape
  (tensor and CuPy array nodes also name the ``"device"`` they were saved
  from, ``"cpu"`` or ``"cuda:N"``; files without it were saved on the CPU);
- ``arrays/<n>.npy``: one NumPy ``.npy`` file per distinct array.

Loading, in order:

1. refuses files recognisably in another format (a pickle, a bare ``.npy``);
2. reads the zip directory and, before decompressing anything, refuses
   member names that are absolute or contain ``..``, repeated names,
   encrypted members, and declared uncompressed sizes the stored bytes
   cannot hold (zip bombs);
3. refuses any member other than ``manifest.json`` and ``arrays/<n>.npy``
   (an extra pickle member in particular);
4. parses the JSON and checks every node against that schema;
5. reads each array with ``numpy.lib.format.read_array(..., allow_pickle=False)``
   after checking its header (no object dtype; a shape that fills exactly
   the member's declared size),

so no byte of the file is ever interpreted as code. Each refusal is a
``CheckpointError`` naming the problem and the member.

Writing to a path is atomic: the archive is written to a temporary file in
the same directory, flushed and fsynced, then renamed over the target, so a
failure midway leaves any previous checkpoint intact.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import uuid
import zipfile
from collections import OrderedDict

import numpy as np

from minigrad import backend
from minigrad.tensor import Tensor

__all__ = ["save", "load", "CheckpointError"]

FORMAT = "minigrad-checkpoint"
VERSION = 1
MANIFEST = "manifest.json"
_MAX_MANIFEST_BYTES = 256 * 2**20
_ZIP64_THRESHOLD = 2**30
_ZIP_MAGIC = b"PK\x03\x04"
_NPY_MAGIC = b"\x93NUMPY"
_PICKLE_PROTO = 0x80
# Checkpoints are shallow (a state dict is 3-4 levels deep); the limit keeps
# both directions far from Python's recursion limit.
_MAX_DEPTH = 100
_SAVED_DEVICE = re.compile(r"^(cpu|cuda:(0|[1-9][0-9]*))$")
_ARRAY_ENTRY = re.compile(r"^arrays/(0|[1-9][0-9]*)\.npy$")
_DRIVE = re.compile(r"^[A-Za-z]:")
_PICKLE_SUFFIXES = (".pkl", ".pickle", ".pt", ".pth")
# What zipfile raises for a damaged archive (NotImplementedError: a corrupt header asking for a zip feature).
_ZIP_ERRORS = (zipfile.BadZipFile, EOFError, OSError, NotImplementedError)
# Deflate cannot expand data by more than about 1032:1; a member declaring more is a zip bomb.
_MAX_DEFLATE_RATIO = 1100


class CheckpointError(RuntimeError, ValueError):
    """A file that ``load`` refuses: not a minigrad checkpoint, unsafe, malformed or corrupt.

    A RuntimeError, the class ``torch.load`` raises for an archive it cannot
    read (a truncated or foreign zip), so a ported ``except RuntimeError:``
    catches it; also a ValueError (its only base before), for code that catches that.
    """


# -- saving -------------------------------------------------------------------


def save(obj, path) -> None:
    """Write ``obj`` to ``path`` as a checkpoint.

    ``obj`` is a nest of dicts (keys: str, int, float, bool, None or tuples
    of those), lists and tuples whose leaves are Tensors, NumPy/CuPy arrays,
    NumPy scalars, ints, floats, bools, strings or None: what ``state_dict()``
    of a module or optimizer returns. An array referenced twice is stored once.

    Args:
        obj: the object to save.
        path: a str or ``os.PathLike`` (written atomically: see the module
            docstring), or a binary file object opened for writing.

    Raises:
        TypeError: ``obj`` contains an unsupported type or an object-dtype
            array (the message gives its location, like ``['state'][0]['x']``).
        ValueError: ``obj`` contains itself, or is nested more than 100 levels deep.
    """
    encoder = _Encoder()
    manifest = {"format": FORMAT, "version": VERSION, "root": encoder.encode(obj, "", [])}
    if _is_file_object(path, "write", "save"):
        _write_archive(path, manifest, encoder.arrays)
        return
    _write_atomically(os.fsdecode(os.fspath(path)), manifest, encoder.arrays)


def _is_file_object(path, method: str, fn: str) -> bool:
    """True for a file object with ``method``; False for a path; TypeError for anything else."""
    if isinstance(path, (str, bytes, os.PathLike)):
        return False
    if hasattr(path, method):
        return True
    raise TypeError(
        f"{fn}: path must be a str, os.PathLike or a binary file object, got {type(path).__name__}"
    )


class _Encoder:
    """Turns an object into manifest nodes, collecting its arrays (each distinct array once)."""

    def __init__(self):
        self.arrays = []  # (entry name, array)
        self._entries = {}  # id(array) -> entry name

    def encode(self, obj, where: str, active: list):
        if obj is None:
            return {"type": "none"}
        if isinstance(obj, bool):
            return {"type": "bool", "value": obj}
        if isinstance(obj, int):
            return {"type": "int", "value": obj}
        if isinstance(obj, float):
            return {"type": "float", "value": repr(obj)}
        if isinstance(obj, str):
            return {"type": "str", "value": obj}
        if isinstance(obj, Tensor):
            return {**self._array_node("tensor", obj.array, where), "device": str(backend.device_of(obj.array))}
        if isinstance(obj, np.ndarray):
            return {**self._array_node("array", obj, where), "kind": "numpy"}
        if backend.is_array(obj):
            return {**self._array_node("array", obj, where), "kind": "cupy", "device": str(backend.device_of(obj))}
        if isinstance(obj, np.generic):
            return self._array_node("numpy_scalar", np.asarray(obj), where)
        if isinstance(obj, (dict, list, tuple)):
            return self._container(obj, where, active)
        raise TypeError(
            f"save: cannot store an object of type {type(obj).__module__}.{type(obj).__name__} "
            f"at {where or 'the top level'}; checkpoints hold dicts, lists, tuples, Tensors, "
            "arrays, numbers, strings and None"
        )

    def _container(self, obj, where, active):
        if any(obj is outer for outer in active):
            raise ValueError(f"save: the object contains itself at {where or 'the top level'}")
        if len(active) >= _MAX_DEPTH:
            raise ValueError(f"save: the object is nested deeper than {_MAX_DEPTH} levels at {where}")
        active.append(obj)
        try:
            if isinstance(obj, dict):
                items = [
                    [self._key(k, where), self.encode(v, f"{where}[{k!r}]", active)] for k, v in obj.items()
                ]
                return {"type": "dict", "ordered": isinstance(obj, OrderedDict), "items": items}
            kind = "list" if isinstance(obj, list) else "tuple"
            items = [self.encode(v, f"{where}[{i}]", active) for i, v in enumerate(obj)]
            return {"type": kind, "items": items}
        finally:
            active.pop()

    def _key(self, key, where):
        if key is None or isinstance(key, (bool, int, float, str)):
            return self.encode(key, where, [])
        if isinstance(key, tuple):
            return {"type": "tuple", "items": [self._key(k, where) for k in key]}
        raise TypeError(
            f"save: dict key {key!r} of type {type(key).__name__} at {where or 'the top level'} is not "
            "supported; keys must be str, int, float, bool, None or tuples of those"
        )

    def _array_node(self, node_type, array, where):
        if array.dtype.hasobject or not type(array.dtype)._legacy:
            raise TypeError(
                f"save: the array at {where or 'the top level'} has dtype {array.dtype}, which cannot be "
                "stored without pickling; convert it to a numeric dtype"
            )
        entry = self._entries.get(id(array))
        if entry is None:
            entry = f"arrays/{len(self.arrays)}.npy"
            self._entries[id(array)] = entry
            self.arrays.append((entry, array))
        return {"type": node_type, "entry": entry, "dtype": array.dtype.str, "shape": list(array.shape)}


def _write_atomically(path: str, manifest: dict, arrays: list) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    # os.open with 0o666 lets the umask decide the permissions, as for any new file.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            _write_archive(f, manifest, arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    """Make the rename durable (POSIX); not possible, nor needed, on every platform."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # e.g. Windows or filesystems that cannot fsync a directory
    finally:
        os.close(fd)


def _write_archive(f, manifest: dict, arrays: list) -> None:
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        archive.writestr(MANIFEST, json.dumps(manifest, allow_nan=False))
        for entry, array in arrays:
            _write_array(archive, entry, array)


def _write_array(archive, entry: str, array) -> None:
    """Stream one array into the archive as a .npy entry (GPU arrays are copied to the host first)."""
    host = backend.to_numpy(array)
    with archive.open(entry, "w", force_zip64=host.nbytes >= _ZIP64_THRESHOLD) as out:
        np.lib.format.write_array(out, host, allow_pickle=False)


# -- loading ------------------------------------------------------------------


def load(path, map_location=None, *, weights_only=None):
    """Read a checkpoint written by ``save``.

    Args:
        path: a str or ``os.PathLike``, or a binary file object opened for reading.
        map_location: where the loaded Tensors and CuPy arrays go, as in
            ``torch.load``. Each was saved with its device ("cpu" or
            "cuda:N", its *location*; files from before locations were
            recorded say "cpu"):

            - None: back to its location (RuntimeError when that is a CUDA
              device and CUDA is not available: pass ``map_location="cpu"``);
            - a device (``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``mg.device``, an int N): all go there;
            - a dict ``{location: device}``, e.g. ``{"cuda:1": "cuda:0"}``:
              those saved on a listed location go to its device, the others
              back to their location;
            - a callable ``f(storage, location)``: ``storage`` is the data as a
              CPU Tensor (PyTorch passes a CPU storage), ``location`` the saved
              device's name; it returns the Tensor (or array) to use, e.g.
              ``storage.cuda(1)``, or None for the default (its location).

            A CuPy array placed on the CPU comes back as a NumPy array;
            NumPy arrays always come back as NumPy arrays.
        weights_only: accepted for PyTorch's signature. minigrad checkpoints
            never unpickle, so loading is always as safe as PyTorch's
            ``weights_only=True``, whatever the value.

    Returns:
        the saved structure: dicts (OrderedDicts where an OrderedDict was
        saved), lists, tuples, numbers, strings, None, and Tensors
        (``requires_grad=False``) / arrays with their saved dtypes.

    Raises:
        CheckpointError (a RuntimeError and a ValueError): the file is a pickle (for instance
            written by ``torch.save`` or ``pickle.dump``), not a minigrad
            checkpoint, holds a member other than the manifest and arrays (a
            pickle in particular), a member named by an absolute path or with
            ``..``, a member whose declared size is absurd (a zip bomb), an
            object-dtype array, has a malformed manifest, or is truncated or
            corrupt. The message says which, naming the member.
        TypeError: ``map_location`` is none of the above (or a dict with keys
            or values that are not device names), a callable returned
            something other than a Tensor, array or None, or
            ``weights_only`` is not a bool or None.
        ValueError/RuntimeError: a device name is invalid or unavailable.
        FileNotFoundError: no such file.
    """
    if weights_only is not None and not isinstance(weights_only, bool):
        raise TypeError(f"load: weights_only must be a bool or None, got {type(weights_only).__name__}")
    placement = _Placement(map_location)
    if _is_file_object(path, "read", "load"):
        return _load_from(_seekable(path), "<file object>", placement)
    name = os.fsdecode(os.fspath(path))
    with open(name, "rb") as f:
        return _load_from(f, name, placement)


def _is_device_name(value) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class _Placement:
    """Where ``load`` puts each tensor, from ``map_location`` (see ``load``)."""

    def __init__(self, map_location):
        self.device = self.mapping = self.function = None
        if map_location is None:
            return
        if _is_device_name(map_location):
            self.device = backend.normalize_device(map_location)
        elif isinstance(map_location, dict):
            for key, value in map_location.items():
                if not isinstance(key, str) or not _is_device_name(value):
                    raise TypeError(
                        "load: a map_location dict maps saved device names to devices, like {'cuda:1': 'cpu'}; "
                        f"got the item {key!r}: {value!r}"
                    )
            self.mapping = {str(key): value for key, value in map_location.items()}
        elif callable(map_location):
            self.function = map_location
        else:
            raise TypeError(
                "load: map_location must be None, a device ('cpu', 'cuda:0', mg.device), a dict such as "
                f"{{'cuda:0': 'cpu'}} or a callable(storage, location); got {type(map_location).__name__}"
            )

    def place(self, array, location: str, file_name: str) -> Tensor:
        """The Tensor for host ``array`` saved on ``location``, on the device ``map_location`` chooses."""
        if self.device is not None:
            return Tensor(backend.to_device(array, self.device))
        if self.function is not None:
            placed = self.function(Tensor(array), location)
            if placed is not None:
                if isinstance(placed, Tensor):
                    return Tensor(placed.array)
                if backend.is_array(placed):
                    return Tensor(placed)
                raise TypeError(
                    f"load: the map_location callable must return a Tensor, an array or None, got "
                    f"{type(placed).__name__} for a tensor saved on {location}"
                )
        target = location if self.mapping is None else self.mapping.get(location, location)
        try:
            device = backend.normalize_device(target)
        except RuntimeError as error:
            raise RuntimeError(
                f"load: {file_name} holds a tensor saved on {location}, which cannot go to {target}: {error}. "
                "Pass map_location='cpu' (or a dict such as {'" + location + "': 'cpu'}) to load it elsewhere"
            ) from None
        return Tensor(backend.to_device(array, device))


def _seekable(f):
    """``f`` itself when it can seek (zip archives need it), else its contents in memory."""
    try:
        if f.seekable():
            return f
    except AttributeError:
        pass
    return io.BytesIO(f.read())


def _load_from(f, name: str, placement: _Placement):
    start = f.tell()
    head = f.read(8)
    f.seek(start)
    _refuse_foreign(head, name)
    try:
        archive = zipfile.ZipFile(f)
    except (*_ZIP_ERRORS, ValueError) as error:  # ValueError: offsets that point before the file, bad names
        raise CheckpointError(
            f"{name} is not a minigrad checkpoint or is truncated/corrupt: cannot read it as a zip archive "
            f"({error})"
        ) from None
    with archive:
        _check_member_headers(archive, name, _stream_size(f) - start)
        names = set(archive.namelist())
        if MANIFEST not in names:
            raise CheckpointError(_missing_manifest_message(name, names))
        _check_member_names(archive, name)
        manifest = _read_manifest(archive, name)
        return _Decoder(archive, names, name, placement).decode(manifest["root"], "root", 0)


def _refuse_foreign(head: bytes, name: str) -> None:
    """Raise for files recognisably in another format, before trying to read them as a zip."""
    if head[:1] and head[0] == _PICKLE_PROTO:
        raise CheckpointError(
            f"{name} is a pickle file (written by pickle.dump or by torch.save's legacy format); "
            "minigrad.load never unpickles, since unpickling can run arbitrary code. Re-save the "
            "data with minigrad.save (convert tensors to NumPy arrays first)"
        )
    if head.startswith(_NPY_MAGIC):
        raise CheckpointError(
            f"{name} is a bare .npy file, not a minigrad checkpoint; read it with numpy.load"
        )
    if not head:
        raise CheckpointError(f"{name} is empty, not a minigrad checkpoint")
    if not head.startswith(_ZIP_MAGIC):
        raise CheckpointError(
            f"{name} is not a minigrad checkpoint: it does not start with a zip header (got {head!r})"
        )


def _stream_size(f) -> int:
    position = f.tell()
    size = f.seek(0, os.SEEK_END)
    f.seek(position)
    return size


def _check_member_headers(archive, name: str, archive_size: int) -> None:
    """Refuse unsafe member names, repeated names and absurd declared sizes, from the zip directory alone.

    A name that is absolute or climbs out with ``..`` could overwrite files if
    the archive were ever extracted; a declared size beyond what the stored
    bytes can hold is a zip bomb. Nothing is decompressed before this passes.
    """
    seen = set()
    for info in archive.infolist():
        member = info.filename
        if _is_unsafe_member_name(member):
            raise CheckpointError(
                f"{name}: refused the member {member!r}: member names must be relative paths inside the archive "
                "(no absolute paths, drive letters or '..'); a minigrad checkpoint only holds manifest.json and "
                "arrays/<n>.npy"
            )
        if member in seen:
            raise CheckpointError(f"{name}: the member {member!r} appears twice in the archive; refused as ambiguous")
        seen.add(member)
        if info.flag_bits & 0x1:
            raise CheckpointError(f"{name}: the member {member!r} is encrypted; minigrad checkpoints never are")
        _check_declared_size(info, name, archive_size)


def _is_unsafe_member_name(member: str) -> bool:
    if not member or "\x00" in member or member.startswith(("/", "\\")) or _DRIVE.match(member):
        return True
    return ".." in re.split(r"[/\\]", member)


def _check_declared_size(info, name: str, archive_size: int) -> None:
    """A member's uncompressed size must be one its stored bytes can produce (checkpoints are stored, not deflated)."""
    member, size, stored = info.filename, info.file_size, info.compress_size
    if info.compress_type == zipfile.ZIP_STORED:
        plausible = size == stored and stored <= archive_size
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        plausible = stored <= archive_size and size <= stored * _MAX_DEFLATE_RATIO
    else:
        raise CheckpointError(
            f"{name}: the member {member!r} uses zip compression method {info.compress_type}; minigrad checkpoints "
            "are stored uncompressed (or deflated). Re-save it with minigrad.save"
        )
    if not plausible:
        raise CheckpointError(
            f"{name}: the member {member!r} declares an uncompressed size of {size} bytes, which its {stored} "
            f"stored bytes in a {archive_size}-byte file cannot hold (a zip bomb or a corrupt archive); refused "
            "before reading it"
        )


def _check_member_names(archive, name: str) -> None:
    """Refuse members other than the manifest and ``arrays/<n>.npy`` (an extra pickle in particular)."""
    for info in archive.infolist():
        member = info.filename
        if member == MANIFEST or _ARRAY_ENTRY.match(member) or member == "arrays/":
            continue
        if member.endswith(_PICKLE_SUFFIXES) or _starts_with_pickle(archive, info):
            raise CheckpointError(
                f"{name}: the member {member!r} is a pickle; minigrad.load refuses files holding pickles, since "
                "unpickling can run arbitrary code. Re-save the data with minigrad.save"
            )
        raise CheckpointError(
            f"{name}: unexpected member {member!r}; a minigrad checkpoint holds only {MANIFEST} and "
            "arrays/<n>.npy. Re-save the data with minigrad.save"
        )


def _starts_with_pickle(archive, info) -> bool:
    """True when the member's first byte is a pickle's protocol marker (its size was checked: safe to peek)."""
    try:
        with archive.open(info) as f:
            head = f.read(1)
    except (*_ZIP_ERRORS, ValueError, RuntimeError):  # RuntimeError: an encrypted member
        return False
    return head[:1] == bytes([_PICKLE_PROTO])


def _missing_manifest_message(name: str, names: set) -> str:
    if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
        return (
            f"{name} is a PyTorch checkpoint (torch.save zip with a pickled data.pkl); minigrad.load "
            "never unpickles, since unpickling can run arbitrary code. Load it with torch.load"
            "(weights_only=True), convert the tensors to NumPy arrays and save them with minigrad.save"
        )
    return f"{name} is a zip archive but not a minigrad checkpoint: it has no {MANIFEST}"


def _read_manifest(archive, name: str) -> dict:
    info = archive.getinfo(MANIFEST)
    if info.file_size > _MAX_MANIFEST_BYTES:
        raise CheckpointError(f"{name}: {MANIFEST} is implausibly large ({info.file_size} bytes)")
    try:
        text = archive.read(MANIFEST)
    except (*_ZIP_ERRORS, ValueError) as error:
        raise CheckpointError(f"{name} is truncated or corrupt: cannot read {MANIFEST} ({error})") from None
    try:
        manifest = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise CheckpointError(f"{name}: malformed manifest, {MANIFEST} is not valid JSON ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or "root" not in manifest:
        raise CheckpointError(
            f"{name}: malformed manifest, expected a JSON object with format {FORMAT!r} and a 'root' node"
        )
    if manifest.get("version") != VERSION:
        raise CheckpointError(
            f"{name}: unsupported checkpoint version {manifest.get('version')!r} "
            f"(this minigrad reads version {VERSION})"
        )
    return manifest


class _Decoder:
    """Checks manifest nodes against the schema and rebuilds the saved object."""

    def __init__(self, archive, names, file_name, placement):
        self.archive = archive
        self.names = names
        self.file_name = file_name
        self.placement = placement
        self._arrays = {}  # entry -> array already read (an array saved once, referenced twice)

    def fail(self, where, problem):
        raise CheckpointError(f"{self.file_name}: malformed manifest at {where}: {problem}")

    def decode(self, node, where, depth):
        if depth > _MAX_DEPTH:
            self.fail(where, f"nested deeper than {_MAX_DEPTH} levels")
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            self.fail(where, f"expected a node object with a 'type', got {str(node)[:80]}")
        kind = node["type"]
        if kind == "none":
            return None
        if kind in ("bool", "int", "str"):
            return self._plain(node, kind, where)
        if kind == "float":
            return self._float(node, where)
        if kind in ("list", "tuple"):
            items = self._items(node, where)
            items = [self.decode(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(items)]
            return items if kind == "list" else tuple(items)
        if kind == "dict":
            return self._dict(node, where, depth)
        if kind in ("tensor", "array", "numpy_scalar"):
            return self._array(node, kind, where)
        self.fail(where, f"unknown node type {kind!r}")

    def _plain(self, node, kind, where):
        value = node.get("value")
        expected = {"bool": bool, "int": int, "str": str}[kind]
        if type(value) is not expected:
            self.fail(where, f"a {kind} node needs a {expected.__name__} value, got {value!r}"[:200])
        return value

    def _float(self, node, where):
        value = node.get("value")
        if not isinstance(value, str):
            self.fail(where, f"a float node needs its repr as a string, got {value!r}"[:200])
        try:
            return float(value)
        except ValueError:
            self.fail(where, f"{value[:40]!r} is not a float")

    def _items(self, node, where):
        items = node.get("items")
        if not isinstance(items, list):
            self.fail(where, f"a {node['type']} node needs an 'items' list")
        return items

    def _dict(self, node, where, depth):
        result = OrderedDict() if node.get("ordered") is True else {}
        for i, pair in enumerate(self._items(node, where)):
            if not isinstance(pair, list) or len(pair) != 2:
                self.fail(f"{where}.items[{i}]", "expected a [key, value] pair")
            key = self.decode(pair[0], f"{where}.items[{i}].key", depth + 1)
            try:
                hash(key)
            except TypeError:
                self.fail(f"{where}.items[{i}].key", f"a dict key must be hashable, got {type(key).__name__}")
            result[key] = self.decode(pair[1], f"{where}[{key!r}]", depth + 1)
        return result

    def _array(self, node, kind, where):
        entry = node.get("entry")
        if not isinstance(entry, str) or entry not in self.names or entry == MANIFEST:
            self.fail(where, f"{entry!r} is not an array entry of the archive")
        array = self._arrays.get(entry)
        if array is None:
            array = self._read_array(entry, where)
            self._arrays[entry] = array
        self._check_metadata(node, array, entry, where)
        if kind == "numpy_scalar":
            return array[()]
        if kind == "array" and node.get("kind") != "cupy":
            return array
        location = node.get("device", "cpu")
        if not isinstance(location, str) or _SAVED_DEVICE.match(location) is None:
            self.fail(where, f"'device' must be 'cpu' or 'cuda:N', got {location!r}"[:200])
        placed = self.placement.place(array, location, self.file_name)
        return placed if kind == "tensor" else placed.array

    def _read_array(self, entry, where):
        try:
            with self.archive.open(entry) as f:
                self._check_header(f, entry, self.archive.getinfo(entry).file_size)
            with self.archive.open(entry) as f:
                return np.lib.format.read_array(f, allow_pickle=False)
        except CheckpointError:
            raise
        except _ZIP_ERRORS as error:
            raise CheckpointError(
                f"{self.file_name} is truncated or corrupt: cannot read {entry} ({error})"
            ) from None
        except ValueError as error:
            raise CheckpointError(f"{self.file_name}: {entry} is not a valid .npy array ({error})") from None

    def _check_header(self, f, entry, declared_size):
        """Refuse object dtypes, and shapes the member's declared size cannot hold, before any data is read."""
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise CheckpointError(f"{self.file_name}: {entry} uses unsupported .npy format version {version}")
        if dtype.hasobject:
            raise CheckpointError(
                f"{self.file_name}: {entry} holds an object-dtype array ({dtype}), which can only be "
                "loaded by unpickling; refused"
            )
        expected = f.tell() + math.prod(shape) * dtype.itemsize  # Python ints: no overflow for absurd shapes
        if expected != declared_size:
            raise CheckpointError(
                f"{self.file_name}: {entry} declares {declared_size} bytes but its .npy header (shape "
                f"{tuple(shape)}, dtype {dtype.str}) needs {expected}; refused as corrupt before reading the data"
            )

    def _check_metadata(self, node, array, entry, where):
        if node.get("dtype") != array.dtype.str or node.get("shape") != list(array.shape):
            self.fail(
                where,
                f"{entry} holds dtype {array.dtype.str} shape {list(array.shape)} but the manifest says "
                f"dtype {node.get('dtype')!r} shape {node.get('shape')!r}",
            )

