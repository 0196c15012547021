"""gradwalk.save / gradwalk.load: state dicts round-trip; the file never runs code; foreign and
corrupt files fail with a clear error."""
import io
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import gradwalk
from gradwalk import nn


def test_model_and_optimizer_state_round_trip(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    opt = gradwalk.optim.Adam(model.parameters(), lr=0.01)
    model(gradwalk.randn(5, 3)).sum().backward()
    opt.step()
    path = tmp_path / "checkpoint.gw"
    gradwalk.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3, "note": None}, path)
    loaded = gradwalk.load(path)
    assert loaded["epoch"] == 3 and loaded["note"] is None
    assert isinstance(loaded["model"], OrderedDict) and list(loaded["model"]) == list(model.state_dict())
    for key, value in model.state_dict().items():
        assert loaded["model"][key].dtype is value.dtype
        np.testing.assert_array_equal(loaded["model"][key]._data, value._data)
    fresh = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    fresh.load_state_dict(loaded["model"])
    opt2 = gradwalk.optim.Adam(fresh.parameters(), lr=0.01)
    opt2.load_state_dict(loaded["optim"])
    assert set(opt2.state_dict()["state"]) == {0, 1, 2, 3, 4, 5}  # integer keys survive


def test_file_objects_tuples_parameters_and_shared_tensors():
    t = gradwalk.tensor([1.0, 2.0])
    p = nn.Parameter(gradwalk.tensor([3.0]))
    buffer = io.BytesIO()
    gradwalk.save({"pair": (t, t), "p": p, "ints": [1, 2.5, True]}, buffer)
    buffer.seek(0)
    loaded = gradwalk.load(buffer)
    assert isinstance(loaded["pair"], tuple) and loaded["pair"][0] is loaded["pair"][1]
    assert isinstance(loaded["p"], nn.Parameter) and loaded["p"].requires_grad
    assert loaded["ints"] == [1, 2.5, True]


def test_the_archive_holds_json_and_npy_only(tmp_path):
    path = tmp_path / "w.gw"
    gradwalk.save({"w": gradwalk.ones(2, 2)}, path)
    names = zipfile.ZipFile(path).namelist()
    assert names == ["gradwalk.json", "tensors/0.npy"]


def test_an_object_pickle_cannot_store_fails_as_in_pytorch():
    with pytest.raises((pickle.PicklingError, AttributeError), match="pickle") as in_torch:
        torch.save({"f": lambda: 0}, io.BytesIO())
    with pytest.raises(in_torch.type, match="pickle"):
        gradwalk.save({"f": lambda: 0}, io.BytesIO())


def test_a_pytorch_checkpoint_loads_and_its_legacy_format_is_refused_with_a_clear_error(tmp_path):
    path = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2)}, path)
    assert gradwalk.load(path)["w"].tolist() == [1.0, 1.0]  # (more in test_real_code_corpus4.py)
    torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="not a gradwalk file"):
        gradwalk.load(path)


def test_garbage_and_truncated_files_are_refused(tmp_path):
    junk = tmp_path / "junk.gw"
    junk.write_bytes(b"definitely not a zip")
    with pytest.raises(RuntimeError, match="not a gradwalk file"):
        gradwalk.load(junk)
    good = io.BytesIO()
    gradwalk.save({"w": gradwalk.ones(100)}, good)
    truncated = tmp_path / "cut.gw"
    truncated.write_bytes(good.getvalue()[:300])
    with pytest.raises(RuntimeError, match="gradwalk.load"):
        gradwalk.load(truncated)


def test_a_pickled_array_inside_is_refused(tmp_path):
    path = tmp_path / "evil.gw"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("gradwalk.json", '{"format": "gradwalk-save", "version": 1, "object": {"tensor": 0}}')
        payload = io.BytesIO()
        np.save(payload, np.array([object()], dtype=object), allow_pickle=True)
        archive.writestr("tensors/0.npy", payload.getvalue())
    with pytest.raises(RuntimeError, match="corrupt"):
        gradwalk.load(path)
