# label: safe
# why: after the fix apply_filter_binary_mask multiplies out of place (`module_parameter.mul(mask)`), so tracing for export no longer touches the nn.Parameter; the only in-place write is setting entries of the mask buffer before training, which nothing saved.
# source: https://github.com/openvinotoolkit/nncf/pull/1405 (commit 632b7646a3377c90980a71c688a583a3c398404b)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def broadcast_filter_mask(filter_mask, shape, dim=0):
    broadcasted_shape = [1] * len(shape)
    broadcasted_shape[dim] = filter_mask.size(0)
    return filter_mask.view(broadcasted_shape)


def apply_filter_binary_mask(filter_mask, module_parameter, node_name_for_logging='', dim=0):
    """Mask is applied to a given dimension without overriding parameter's values."""
    if filter_mask.size(0) != module_parameter.size(dim):
        raise RuntimeError("Shape of mask isn't broadcastable to weight shape")
    broadcasted_filter_mask = broadcast_filter_mask(filter_mask, module_parameter.shape, dim)
    return module_parameter.mul(broadcasted_filter_mask)


class FilterPruningMask(nn.Module):
    def __init__(self, size, node_name, dim=0):
        super().__init__()
        self.register_buffer('binary_filter_pruning_mask', torch.ones(size))
        self.mask_applying_dim = dim
        self.node_name = node_name

    def forward(self, **params):
        new_params = []
        for param_name, param_value in params.items():
            dim = 0 if param_name == 'bias' else self.mask_applying_dim
            new_params.append(apply_filter_binary_mask(
                self.binary_filter_pruning_mask, param_value, node_name_for_logging=self.node_name, dim=dim))
        return new_params


class NNCFLinear(nn.Linear):
    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features)
        self.pre_ops = FilterPruningMask(out_features, node_name='NNCFLinear')

    def forward(self, x):
        weight, bias = self.pre_ops(weight=self.weight, bias=self.bias)
        return F.linear(x, weight, bias)


def export_model(model, dummy_input):
    with torch.no_grad():
        torch.jit.trace(model, dummy_input, check_trace=False)


def main():
    model = nn.Sequential(NNCFLinear(6, 8), nn.ReLU(), nn.Linear(8, 2))
    model[0].pre_ops.binary_filter_pruning_mask[torch.tensor([1, 4, 6])] = 0.0
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x, y = torch.randn(16, 6), torch.randn(16, 2)

    for epoch in range(2):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        export_model(model, x[:1])

    return model[0].weight.detach().clone(), model[0].bias.detach().clone()


weight, bias = main()
