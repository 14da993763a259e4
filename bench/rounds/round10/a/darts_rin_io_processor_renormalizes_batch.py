# label: hazard silent
# why: io_processor writes the RIN-normalized targets back into the caller's past-feature tensor, so every further forward on the same batch (sampling loop in predict) normalizes already-normalized data
# source: https://github.com/unit8co/darts/issues/2159 (fixed in https://github.com/unit8co/darts/pull/2160)
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
        # x is (batch, output_chunk_length, target_dim, nr_params)
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
        # x is input batch tuple which by definition has the past features in the first element starting with the
        # first n target features
        x = args[0][0]
        # apply reversible instance normalization
        x[:, :, : self.n_targets] = self.rin(x[:, :, : self.n_targets])  # <-- IPL004: normalizes the caller's batch tensor in place; the next forward on the same batch sees normalized data
        # run the forward pass
        out = forward(self, *((x, *args[0][1:]), *args[1:]), **kwargs)
        # inverse transform target output back to original scale
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
        self.dropout = nn.Dropout(0.1)

    @io_processor
    def forward(self, x_in):
        x, _ = x_in
        batch = x.shape[0]
        y = self.layer(self.dropout(x.reshape(batch, -1)))
        return y.view(batch, self.output_chunk_length, self.n_targets, self.nr_params)


def _produce_predict_output(model, input_batch, num_samples):
    # MC-dropout style sampling: the same input batch is fed several times
    model.train()
    with torch.no_grad():
        batch_prediction = [model(input_batch) for _ in range(num_samples)]
    return torch.stack(batch_prediction, dim=0)


model = _NLinearModule(input_chunk_length=12, output_chunk_length=4, input_dim=3, n_targets=2)
past_features = torch.randn(5, 12, 3) * 10 + 50   # 2 targets + 1 past covariate
input_batch = (past_features, None)
samples = _produce_predict_output(model, input_batch, num_samples=3)
sample_mean = samples.mean(0)
