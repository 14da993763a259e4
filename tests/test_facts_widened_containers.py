"""A loop that stores into a container what it read from it (``d[k] = d[k].to(...)``, in
nested loops over a list of dicts) would double the values the container is taken to hold at
every pass; past ``MAX_HELD`` nothing more is added (a widening), so the analysis stays
linear. Reduced from neuraloperator's ``MeshDataModule`` (untuned run 13), which ran past the
per-file CPU budget and was reported IPL999.
"""

from __future__ import annotations

from programs import codes

NESTED_STORES = """
import torch


def build(meshes, attributes, normalizers, keys):
    data = []
    for mesh in meshes:
        item = {}
        item["a"] = mesh.a
        item["b"] = mesh.b
        item["c"] = mesh.c
        item["d"] = mesh.d
        data.append(item)
    for item in data:
        item["d"] = item["c"] * 2
    for item in data:
        for key in item:
            item[key] = torch.as_tensor(item[key]).to(torch.float32)
    for j in range(len(data)):
        for attr in attributes:
            data[j][attr] = torch.as_tensor(data[j][attr])
            if isinstance(data[j][attr], torch.Tensor):
                data[j][attr] = data[j][attr].to(torch.float32)
    for attr in keys:
        for j in range(len(data)):
            elem = data[j][attr]
            if elem.shape[0] != 1:
                elem = elem.unsqueeze(0)
            data[j][attr] = normalizers[attr].transform(elem)
    for attr in keys:
        for j in range(len(data)):
            data[j][attr] = data[j][attr].squeeze(0)
    return data
"""


def test_nested_loops_storing_into_a_list_of_dicts_are_analysed() -> None:
    assert codes(NESTED_STORES) == []
