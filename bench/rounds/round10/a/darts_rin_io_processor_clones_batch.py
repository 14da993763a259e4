# label: safe
# why: the fixed io_processor clones the past features before writing the RIN-normalized targets into them, so the caller's batch is never touched and repeated forwards see the raw data
# source: https://github.com/unit8co/darts/pull/2160 (fix for https://github.com/unit8co/darts/issues/2159)
from functools import wraps

import torch
import torch.nn as nn

torch.manual_seed(0)


class RINorm(nn.Module):
    def __init__(self, input_dim: int, eps=1e-5, affine=True):
        super().__init__()
        self.input_dim = input_dim
        self.eps = eps
        self.affine = affine
        if self.affine:
            self.affine_weight = nn.Parameter(torch.ones(self.input_dim))
            self.affine_bias = nn.Parameter(torch.zeros(self.input_dim))

    def forward(self, x: torch.Tensor):
        calc_dims = tuple(range(1, x.ndim - 1))
        self.mean = torch.mean(x, dim=calc_dims, keepdim=True).detach()
        self.stdev = torch.sqrt(torch.var(x, dim=calc_dims, keepdim=True, unbiased=False) + self.eps).detach()
        x = x - self.mean
        x = x / self.stdev
        if self.affine:
            x = x * self.affine_weight
            x = x + self.affine_bias
        return x

    def inverse(self, x: torch.Tensor):
        if self.affine:
            x = x - self.affine_bias.view(self.affine_bias.shape + (1,))
            x = x / (self.affine_weight.view(self.affine_weight.shape + (1,)) + self.eps * self.eps)
        x = x * self.stdev.view(self.stdev.shape + (1,))
        x = x + self.mean.view(self.mean.shape + (1,))
        return x


def io_processor(forward):
    @wraps(forward)
    def forward_wrapper(self, *args, **kwargs):
        if not self.use_reversible_instance_norm:
            return forward(self, *args, **kwargs)
        # assuming `args[0][0]` is torch.Tensor we could clone it to prevent target re-normalization
        x = args[0][0].clone()
        # apply reversible instance normalization
        x[:, :, : self.n_targets] = self.rin(x[:, :, : self.n_targets])
        # run the forward pass
        out = forward(self, *((x, *args[0][1:]), *args[1:]), **kwargs)
        if isinstance(out, tuple):
            return self.rin.inverse(out[0]), *out[1:]
        else:
            return self.rin.inverse(out)

    return forward_wrapper


class _NLinearModule(nn.Module):
    def __init__(self, input_chunk_length, output_chunk_length, input_dim, n_targets, nr_params=1,
                 use_reversible_instance_norm=True):
        super().__init__()
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.n_targets = n_targets
        self.nr_params = nr_params
        self.use_reversible_instance_norm = use_reversible_instance_norm
        self.rin = RINorm(input_dim=n_targets)
        self.layer = nn.Linear(input_chunk_length * input_dim, output_chunk_length * n_targets * nr_params)

    @io_processor
    def forward(self, x_in):
        x, _ = x_in
        batch = x.shape[0]
        y = self.layer(x.reshape(batch, -1))
        return y.view(batch, self.output_chunk_length, self.n_targets, self.nr_params)


model = _NLinearModule(input_chunk_length=12, output_chunk_length=4, input_dim=3, n_targets=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
past_features = torch.randn(5, 12, 3) * 10 + 50
future_target = torch.randn(5, 4, 2) * 10 + 50
train_batch = (past_features, None)
for epoch in range(3):
    output = model(train_batch)
    loss = nn.functional.mse_loss(output[..., 0], future_target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
final_loss = loss.detach()
