"""``mg.save`` / ``mg.load``: round trips, refusal of pickles and malformed files, atomic writes."""

from __future__ import annotations

import io
import json
import os
import pickle
import stat
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import serialization
from minigrad.serialization import CheckpointError

# Set by _Trap when unpickled: a refused file must never reach this code.
UNPICKLED = []


class _Trap:
    def __reduce__(self):
        return (UNPICKLED.append, ("unpickled!",))


def small_model():
    mg.manual_seed(0)
    return mg.nn.Sequential(mg.nn.Linear(3, 4), mg.nn.LayerNorm(4), mg.nn.Linear(4, 2))


def trained_checkpoint():
    model = small_model()
    optimizer = mg.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
    for _ in range(3):
        optimizer.zero_grad()
        model(mg.randn(5, 3)).sum().backward()
        optimizer.step()
    return model, optimizer, {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}


def assert_same(loaded, original):
    """Structure, types, dtypes and values are identical."""
    if isinstance(original, mg.Tensor):
        assert type(loaded) is mg.Tensor and not loaded.requires_grad and loaded.device == "cpu"
        assert loaded.dtype == original.dtype
        np.testing.assert_array_equal(loaded.array, original.array)
    elif isinstance(original, np.ndarray):
        assert type(loaded) is np.ndarray and loaded.dtype == original.dtype
        np.testing.assert_array_equal(loaded, original)
    elif isinstance(original, np.generic):
        assert type(loaded) is type(original) and loaded == original
    elif isinstance(original, dict):
        assert type(loaded) is type(original) and list(loaded) == list(original)
        for key in original:
            assert_same(loaded[key], original[key])
    elif isinstance(original, (list, tuple)):
        assert type(loaded) is type(original) and len(loaded) == len(original)
        for a, b in zip(loaded, original):
            assert_same(a, b)
    elif isinstance(original, float) and np.isnan(original):
        assert isinstance(loaded, float) and np.isnan(loaded)
    else:
        assert type(loaded) is type(original) and loaded == original


def test_model_and_optimizer_state_round_trip(tmp_path):
    model, optimizer, checkpoint = trained_checkpoint()
    mg.save(checkpoint, tmp_path / "ckpt")
    loaded = mg.load(tmp_path / "ckpt")
    assert_same(loaded, checkpoint)
    assert isinstance(loaded["model"], OrderedDict)
    assert sorted(loaded["optimizer"]["state"]) == [0, 1, 2, 3, 4, 5], "int keys stay ints"
    restored = small_model()
    restored.load_state_dict(loaded["model"])
    x = mg.randn(2, 3)
    np.testing.assert_array_equal(restored(x).array, model(x).array)


def test_dtypes_values_and_python_types_are_preserved(tmp_path):
    arrays = {
        str(dtype): np.arange(6).reshape(2, 3).astype(dtype)
        for dtype in (np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_,
                      np.complex64)
    }
    obj = {
        "arrays": arrays,
        "tensors": [mg.tensor([1.5, 2.5], dtype=mg.float16), mg.tensor(np.arange(3)), mg.zeros(0, 4)],
        "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
        "view": np.arange(20.0)[::3],
        "scalars": (np.float32(1.25), np.int16(-3), np.bool_(True), np.array(7.0)),
        "python": [0, -(2**70), 1e-310, float("inf"), float("-inf"), float("nan"), True, False, None, "",
                   "unicodé ✓"],
        "keys": {0: "int", 1.5: "float", None: "none", True: "bool", (1, "a"): "tuple", "": "empty"},
        "nested": [[[{"deep": ()}]]],
    }
    mg.save(obj, tmp_path / "values")
    assert_same(mg.load(tmp_path / "values"), obj)


def test_an_array_referenced_twice_is_stored_once(tmp_path):
    shared = np.arange(1000.0)
    tensor = mg.Tensor(shared)
    mg.save({"a": shared, "b": shared, "t": tensor}, tmp_path / "shared")
    with zipfile.ZipFile(tmp_path / "shared") as archive:
        assert sorted(archive.namelist()) == ["arrays/0.npy", "manifest.json"]
    loaded = mg.load(tmp_path / "shared")
    assert loaded["a"] is loaded["b"] and loaded["t"].array is loaded["a"]


def test_paths_and_file_objects(tmp_path):
    data = {"w": mg.randn(3)}
    mg.save(data, str(tmp_path / "as_str"))
    assert_same(mg.load(str(tmp_path / "as_str")), data)
    buffer = io.BytesIO()
    mg.save(data, buffer)
    buffer.seek(0)
    assert_same(mg.load(buffer), data)
    assert_same(mg.load(io.BytesIO(buffer.getvalue()), map_location="cpu"), data)
    with pytest.raises(TypeError, match="path must be"):
        mg.save(data, 42)
    assert_same(mg.load(io.BytesIO(buffer.getvalue()), map_location={"cuda:0": "cpu"}), data)
    with pytest.raises(TypeError, match="map_location"):
        mg.load(io.BytesIO(buffer.getvalue()), map_location=3.5)
    with pytest.raises(FileNotFoundError):
        mg.load(tmp_path / "missing")


def test_unsupported_objects_are_refused_when_saving(tmp_path):
    with pytest.raises(TypeError, match=r"type builtins.set at \['opt'\]\[0\]"):
        mg.save({"opt": [{1, 2}]}, tmp_path / "x")
    with pytest.raises(TypeError, match=r"dtype object"):
        mg.save({"a": np.array([{}, None], dtype=object)}, tmp_path / "x")
    with pytest.raises(TypeError, match="dict key"):
        mg.save({frozenset(): 1}, tmp_path / "x")
    cycle = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="contains itself"):
        mg.save(cycle, tmp_path / "x")
    assert not (tmp_path / "x").exists() and os.listdir(tmp_path) == []


# -- refusing unsafe or foreign files --------------------------------------------------------------


def test_a_pickle_file_is_refused_without_unpickling(tmp_path):
    path = tmp_path / "data.pkl"
    path.write_bytes(pickle.dumps({"weights": _Trap()}))
    with pytest.raises(CheckpointError, match="is a pickle file") as error:
        mg.load(path)
    assert "never unpickles" in str(error.value)
    assert UNPICKLED == []


def test_torch_checkpoints_are_refused(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "new.pt")
    with pytest.raises(CheckpointError, match="is a PyTorch checkpoint"):
        mg.load(tmp_path / "new.pt")
    torch.save({"w": torch.ones(2)}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(CheckpointError, match="is a pickle file"):
        mg.load(tmp_path / "legacy.pt")


def write_archive(path, manifest, entries):
    """A hand-made archive: ``manifest`` (dict or raw str) plus ``{name: bytes}`` entries."""
    with zipfile.ZipFile(path, "w") as archive:
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        archive.writestr("manifest.json", text)
        for name, content in entries.items():
            archive.writestr(name, content)
    return path


def npy_bytes(array, allow_pickle=False):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def array_manifest(dtype="<f8", shape=(2,), node_type="tensor"):
    return {"format": "minigrad-checkpoint", "version": 1,
            "root": {"type": "dict", "items": [[{"type": "str", "value": "w"},
                     {"type": node_type, "entry": "arrays/0.npy", "dtype": dtype, "shape": list(shape)}]]}}


def test_an_object_array_inside_a_checkpoint_is_refused_without_unpickling(tmp_path):
    trap = np.array([_Trap(), None], dtype=object)
    path = write_archive(tmp_path / "object", array_manifest("|O"),
                         {"arrays/0.npy": npy_bytes(trap, allow_pickle=True)})
    with pytest.raises(CheckpointError, match="object-dtype array"):
        mg.load(path)
    assert UNPICKLED == []


def test_a_pickle_disguised_as_an_npy_entry_is_refused(tmp_path):
    path = write_archive(tmp_path / "disguised", array_manifest(), {"arrays/0.npy": pickle.dumps(_Trap())})
    with pytest.raises(CheckpointError, match=r"arrays/0.npy is not a valid \.npy array"):
        mg.load(path)
    assert UNPICKLED == []


def manifest_with(root):
    return {"format": "minigrad-checkpoint", "version": 1, "root": root}


@pytest.mark.parametrize("manifest, problem", [
    ("{not json", "not valid JSON"),
    ("[]", "expected a JSON object with format"),
    ({"format": "other", "version": 1, "root": {"type": "none"}}, "expected a JSON object with format"),
    ({**manifest_with({"type": "none"}), "version": 99}, "unsupported checkpoint version"),
    (manifest_with({"type": "pickle"}), "unknown node type 'pickle'"),
    (manifest_with({"type": "int", "value": "3"}), "needs a int value"),
    (manifest_with({"type": "float", "value": "x"}), "is not a float"),
    (manifest_with({"type": "list"}), "needs an 'items' list"),
    (manifest_with({"type": "dict", "items": [[1]]}), r"expected a \[key, value\] pair"),
    (manifest_with({"type": "dict", "items": [[{"type": "list", "items": []}, {"type": "none"}]]}),
     "hashable"),
    (manifest_with([1, 2]), "expected a node object"),
    (array_manifest("<f4"), "manifest says dtype '<f4'"),
    (array_manifest(shape=(3,)), "shape"),
    (manifest_with({"type": "tensor", "entry": "arrays/9.npy"}), "not an array entry"),
], ids=lambda v: v[:30] if isinstance(v, str) else "")
def test_malformed_manifests_are_refused_with_the_problem_named(tmp_path, manifest, problem):
    path = write_archive(tmp_path / "bad", manifest, {"arrays/0.npy": npy_bytes(np.zeros(2))})
    with pytest.raises(CheckpointError, match=problem):
        mg.load(path)


@pytest.mark.parametrize("depth, problem", [(150, "nested deeper than 100"), (100_000, "not valid JSON")])
def test_deeply_nested_manifests_are_refused(tmp_path, depth, problem):
    root = '{"type": "list", "items": [' * depth + '{"type": "none"}' + "]}" * depth
    manifest = '{"format": "minigrad-checkpoint", "version": 1, "root": ' + root + "}"
    with pytest.raises(CheckpointError, match=problem):
        mg.load(write_archive(tmp_path / "deep", manifest, {}))


def test_deeply_nested_objects_are_refused_when_saving(tmp_path):
    nested = []
    for _ in range(150):
        nested = [nested]
    with pytest.raises(ValueError, match="nested deeper than 100"):
        mg.save(nested, tmp_path / "deep")


def test_other_files_are_refused_with_a_clear_error(tmp_path):
    cases = {
        "empty": (b"", "is empty"),
        "text": (b"hello world", "does not start with a zip header"),
        "npy": (npy_bytes(np.zeros(3)), "bare .npy file"),
    }
    for name, (content, problem) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(CheckpointError, match=problem):
            mg.load(tmp_path / name)
    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as archive:
        archive.writestr("readme.txt", "hi")
    with pytest.raises(CheckpointError, match="has no manifest.json"):
        mg.load(tmp_path / "plain.zip")


def test_truncated_and_corrupted_files_give_a_clear_error(tmp_path):
    mg.save({"w": np.arange(4096.0)}, tmp_path / "good")
    content = (tmp_path / "good").read_bytes()
    (tmp_path / "truncated").write_bytes(content[: len(content) // 2])
    with pytest.raises(CheckpointError, match="truncated/corrupt"):
        mg.load(tmp_path / "truncated")
    corrupted = bytearray(content)
    corrupted[len(content) // 2] ^= 0xFF  # inside the array's data
    (tmp_path / "corrupted").write_bytes(bytes(corrupted))
    with pytest.raises(CheckpointError, match="truncated or corrupt.*arrays/0.npy"):
        mg.load(tmp_path / "corrupted")


# -- atomic writes ---------------------------------------------------------------------------------


def test_a_failure_while_writing_leaves_the_previous_checkpoint_intact(tmp_path, monkeypatch):
    path = tmp_path / "ckpt"
    mg.save({"version": 1, "w": np.zeros(10)}, path)
    write_array = serialization._write_array
    calls = []

    def failing_write(archive, entry, array):
        calls.append(entry)
        write_array(archive, entry, array)
        if len(calls) == 2:
            raise OSError("disk full")

    monkeypatch.setattr(serialization, "_write_array", failing_write)
    with pytest.raises(OSError, match="disk full"):
        mg.save({"version": 2, "a": np.ones(10), "b": np.ones(10), "c": np.ones(10)}, path)
    assert len(calls) == 2
    loaded = mg.load(path)
    assert loaded["version"] == 1 and not loaded["w"].any()
    assert os.listdir(tmp_path) == ["ckpt"], "the temporary file is removed"
    monkeypatch.undo()
    mg.save({"version": 3}, path)
    assert mg.load(path) == {"version": 3}
    assert os.listdir(tmp_path) == ["ckpt"]


def test_new_files_get_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    mg.save({"a": 1}, tmp_path / "perm")
    assert stat.S_IMODE(os.stat(tmp_path / "perm").st_mode) == 0o666 & ~umask
