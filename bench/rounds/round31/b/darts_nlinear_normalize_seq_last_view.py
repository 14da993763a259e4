# label: hazard silent
# why: with `normalize=True` _NLinearModule takes `seq_last = x[:, -1:, :output_dim].detach()` (a view of the batch) and then subtracts it from x in place; seq_last now reads zeros, so the final `x + seq_last` de-normalisation adds nothing and the forecasts, loss and gradients are silently wrong.
# source: https://github.com/unit8co/darts/pull/2724
from functools import wraps
from typing import Optional

import torch
import torch.nn as nn

torch.manual_seed(0)


def io_processor(forward):
    """Applies some input / output processing to PLForecastingModule.forward."""

    @wraps(forward)
    def forward_wrapper(self, *args, **kwargs):
        if not self.use_reversible_instance_norm:
            return forward(self, *args, **kwargs)
        x = args[0][0].clone()
        x[:, :, : self.n_targets] = self.rin(x[:, :, : self.n_targets])
        out = forward(self, *((x, *args[0][1:]), *args[1:]), **kwargs)
        return self.rin.inverse(out)

    return forward_wrapper


class PLForecastingModule(nn.Module):
    def __init__(self, input_chunk_length, output_chunk_length, use_reversible_instance_norm=False):
        super().__init__()
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.use_reversible_instance_norm = use_reversible_instance_norm


class _NLinearModule(PLForecastingModule):
    """
    NLinear module
    """

    def __init__(self, input_dim, output_dim, future_cov_dim, static_cov_dim, nr_params, shared_weights,
                 const_init, normalize, **kwargs):
        super().__init__(**kwargs)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.future_cov_dim = future_cov_dim
        self.static_cov_dim = static_cov_dim
        self.nr_params = nr_params
        self.shared_weights = shared_weights
        self.const_init = const_init
        self.normalize = normalize

        def _create_linear_layer(in_dim, out_dim):
            layer = nn.Linear(in_dim, out_dim)
            if self.const_init:
                layer.weight = nn.Parameter((1.0 / in_dim) * torch.ones(layer.weight.shape))
            return layer

        if self.shared_weights:
            layer_in_dim = self.input_chunk_length
            layer_out_dim = self.output_chunk_length * self.nr_params
        else:
            layer_in_dim = self.input_chunk_length * self.input_dim
            layer_out_dim = self.output_chunk_length * self.output_dim * self.nr_params

        self.layer = _create_linear_layer(layer_in_dim, layer_out_dim)

        if self.future_cov_dim != 0:
            self.linear_fut_cov = _create_linear_layer(self.future_cov_dim, self.output_dim * self.nr_params)

    @io_processor
    def forward(self, x_in: tuple[torch.Tensor, Optional[torch.Tensor], Optional[torch.Tensor]]):
        x, x_future, x_static = x_in  # x: (batch, in_len, in_dim)
        batch, _, _ = x.shape

        if self.shared_weights:
            x = x[:, :, : self.output_dim]
            x = x.permute(0, 2, 1)  # (batch, out_dim, in_len)
            if self.normalize:
                seq_last = x[:, :, -1:].detach()  # (batch, out_dim, 1)
                x = x - seq_last
            x = self.layer(x)
            if self.normalize:
                x = x + seq_last
            x = x.view(batch, self.output_dim, self.output_chunk_length, self.nr_params)
            x = x.permute(0, 2, 1, 3)
        else:
            if self.normalize:
                # get last values only for target features
                seq_last = x[:, -1:, : self.output_dim].detach()
                # normalize the target features only (ignore the covariates)
                x[:, :, : self.output_dim] = x[:, :, : self.output_dim] - seq_last  # <-- IPL002

            x = self.layer(x.view(batch, -1))  # (batch, out_len * out_dim * nr_params)
            x = x.view(batch, self.output_chunk_length, self.output_dim * self.nr_params)

            if self.future_cov_dim != 0:
                x_future = torch.nn.functional.pad(
                    input=x_future,
                    pad=(0, 0, 0, self.output_chunk_length - x_future.shape[1]),
                    mode="constant",
                    value=0,
                )
                fut_cov_output = self.linear_fut_cov(x_future)
                x = x + fut_cov_output.view(batch, self.output_chunk_length, self.output_dim * self.nr_params)

            x = x.view(batch, self.output_chunk_length, self.output_dim, self.nr_params)
            if self.normalize:
                # model only forecasts target components, no need to slice
                x = x + seq_last.view(seq_last.shape + (1,))
        return x


def main():
    input_chunk_length, output_chunk_length = 12, 4
    model = _NLinearModule(input_dim=3, output_dim=2, future_cov_dim=1, static_cov_dim=0, nr_params=1,
                           shared_weights=False, const_init=True, normalize=True,
                           input_chunk_length=input_chunk_length, output_chunk_length=output_chunk_length)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    t = torch.arange(input_chunk_length + output_chunk_length, dtype=torch.float32)
    level = 5.0 + torch.rand(8, 1, 1) * 10
    series = level + torch.sin(t / 3)[None, :, None] + 0.1 * torch.randn(8, len(t), 2)
    covariates = torch.cos(t / 5)[None, :, None].expand(8, -1, 1)

    losses = []
    for _ in range(3):
        # a fresh batch per step, as produced by the training dataloader
        past_target = series[:, :input_chunk_length].clone()
        x_past = torch.cat([past_target, covariates[:, :input_chunk_length]], dim=-1)
        x_future = covariates[:, input_chunk_length:]
        y = series[:, input_chunk_length:]
        output = model((x_past, x_future, None))
        loss = ((output[..., 0] - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses), output.detach(), model.layer.weight.detach().clone()


losses, forecast, layer_weight = main()
