# label: hazard silent no-twin
# why: federated_avg starts from model_list[0] itself and accumulates into its parameters with set_(), so the first worker's model is silently overwritten by the average and later evaluated as if it were still local.
# source: https://github.com/OpenMined/PySyft/issues/3613
from typing import Any, Dict

import torch
import torch.nn as nn

torch.manual_seed(0)


def add_model(dst_model, src_model):
    """Add the parameters of two models."""
    params1 = src_model.named_parameters()
    params2 = dst_model.named_parameters()
    dict_params2 = dict(params2)
    with torch.no_grad():
        for name1, param1 in params1:
            if name1 in dict_params2:
                dict_params2[name1].set_(param1.data + dict_params2[name1].data)  # <-- IPL004: accumulates into the caller's first model
    return dst_model


def scale_model(model, scale):
    """Scale the parameters of a model."""
    params = model.named_parameters()
    dict_params = dict(params)
    with torch.no_grad():
        for name, param in dict_params.items():
            dict_params[name].set_(dict_params[name].data * scale)  # <-- IPL004: rescales the caller's first model in place
    return model


def federated_avg(models: Dict[Any, torch.nn.Module]) -> torch.nn.Module:
    """Calculate the federated average of a dictionary containing models."""
    nr_models = len(models)
    model_list = list(models.values())
    model = model_list[0]
    for i in range(1, nr_models):
        model = add_model(model, model_list[i])
    model = scale_model(model, 1.0 / nr_models)
    return model


models = {"alice": nn.Linear(4, 2), "bob": nn.Linear(4, 2), "charlie": nn.Linear(4, 2)}
x = torch.randn(5, 4)
avg_model = federated_avg(models)
avg_out = avg_model(x).detach()
alice_out = models["alice"](x).detach()
bob_out = models["bob"](x).detach()
