# label: hazard silent
# why: with normalize=True and shared_weights=False, _NLinearModule.forward subtracts the last target value with `x[:, :, : self.output_dim] = x[:, :, : self.output_dim] - seq_last`, writing into the caller's input_past; the auto-regressive _get_batch_prediction then rolls that already-normalized window and appends raw predictions, so every chunk after the first is forecast from corrupted inputs (the commit clones x first, "to avoid value mutation from normalization when performing auto-regression").
# source: https://github.com/unit8co/darts/commit/c64b84ef38b48d5bc41a8cc6ac804db53477ae04
from typing import Optional

import torch
import torch.nn as nn

torch.manual_seed(0)


class _NLinearModule(nn.Module):
    def __init__(self, input_chunk_length, output_chunk_length, input_dim, output_dim, future_cov_dim, static_cov_dim, nr_params, shared_weights, const_init, normalize):
        super().__init__()
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.future_cov_dim = future_cov_dim
        self.static_cov_dim = static_cov_dim
        self.nr_params = nr_params
        self.const_init = const_init
        self.normalize = normalize
        self.shared_weights = shared_weights

        if self.shared_weights:
            layer_in_dim = self.input_chunk_length
            layer_out_dim = self.output_chunk_length * self.nr_params
        else:
            layer_in_dim = self.input_chunk_length * self.input_dim
            layer_out_dim = self.output_chunk_length * self.output_dim * self.nr_params

        self.layer = nn.Linear(layer_in_dim, layer_out_dim)
        if self.const_init:
            self.layer.weight = nn.Parameter((1.0 / layer_in_dim) * torch.ones([layer_out_dim, layer_in_dim]))

    def forward(self, x_in: tuple[torch.Tensor, Optional[torch.Tensor], Optional[torch.Tensor]]):
        """
        x_in
            comes as tuple `(x_past, x_future, x_static)` where `x_past` is the input/past chunk and `x_future`
            is the output/future chunk. Input dimensions are `(n_samples, n_time_steps, n_variables)`
        """
        x, x_future, x_static = x_in  # x: (batch, in_len, in_dim)
        batch, _, _ = x.shape

        if self.shared_weights:
            x = x[:, :, : self.output_dim]
            x = x.permute(0, 2, 1)  # (batch, out_dim, in_len)
            if self.normalize:
                seq_last = x[:, :, -1:].detach()  # (batch, out_dim, 1)
                x = x - seq_last
            x = self.layer(x)  # (batch, out_dim, out_len * nr_params)
            if self.normalize:
                x = x + seq_last
            x = x.view(batch, self.output_dim, self.output_chunk_length, self.nr_params)
            x = x.permute(0, 2, 1, 3)
        else:
            if self.normalize:
                # get last values only for target features
                seq_last = x[:, -1:, : self.output_dim].detach().clone()
                # normalize the target features only (ignore the covariates)
                x[:, :, : self.output_dim] = x[:, :, : self.output_dim] - seq_last  # <-- IPL004

            x = self.layer(x.view(batch, -1))  # (batch, out_len * out_dim * nr_params)
            x = x.view(batch, self.output_chunk_length, self.output_dim * self.nr_params)

            x = x.view(batch, self.output_chunk_length, self.output_dim, self.nr_params)
            if self.normalize:
                # model only forecasts target components, no need to slice
                x = x + seq_last.view(seq_last.shape + (1,))
        return x


class PLMixedCovariatesModule(nn.Module):
    def __init__(self, module, input_chunk_length, output_chunk_length):
        super().__init__()
        self.module = module
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.first_prediction_index = 0
        self.likelihood = None

    def forward(self, x):
        return self.module(x)

    def _process_input_batch(self, input_batch):
        past_target, past_covariates, historic_future_covariates, future_covariates, static_covariates = input_batch
        x_past = torch.cat(
            [tensor for tensor in [past_target, past_covariates, historic_future_covariates] if tensor is not None],
            dim=2,
        )
        return x_past, future_covariates, static_covariates

    def _produce_predict_output(self, x: tuple) -> torch.Tensor:
        return self(x).squeeze(dim=-1)

    def _get_batch_prediction(self, n: int, input_batch: tuple, roll_size: int) -> torch.Tensor:
        dim_component = 2
        past_target, past_covariates, historic_future_covariates, future_covariates, future_past_covariates, static_covariates = input_batch

        n_targets = past_target.shape[dim_component]
        n_past_covs = past_covariates.shape[dim_component] if past_covariates is not None else 0

        input_past, input_future, input_static = self._process_input_batch(
            (past_target, past_covariates, historic_future_covariates, None, static_covariates)
        )

        out = self._produce_predict_output(x=(input_past, input_future, input_static))[:, self.first_prediction_index :, :]

        batch_prediction = [out[:, :roll_size, :]]
        prediction_length = roll_size

        while prediction_length < n:
            # roll over input series to contain the latest target and covariates
            input_past = torch.roll(input_past, -roll_size, 1)

            # update target input to include next `roll_size` predictions
            if self.input_chunk_length >= roll_size:
                input_past[:, -roll_size:, :n_targets] = out[:, :roll_size, :]
            else:
                input_past[:, :, :n_targets] = out[:, -self.input_chunk_length :, :]

            left_past, right_past = prediction_length - roll_size, prediction_length
            if n_past_covs and self.input_chunk_length >= roll_size:
                input_past[:, -roll_size:, n_targets : n_targets + n_past_covs] = future_past_covariates[:, left_past:right_past, :]

            out = self._produce_predict_output(x=(input_past, input_future, input_static))[:, self.first_prediction_index :, :]
            batch_prediction.append(out)
            prediction_length += self.output_chunk_length

        batch_prediction = torch.cat(batch_prediction, dim=1)
        batch_prediction = batch_prediction[:, :n, :]
        return batch_prediction


def main():
    icl, ocl, n_targets, n_past_covs = 8, 3, 2, 1
    module = _NLinearModule(
        input_chunk_length=icl, output_chunk_length=ocl, input_dim=n_targets + n_past_covs, output_dim=n_targets,
        future_cov_dim=0, static_cov_dim=0, nr_params=1, shared_weights=False, const_init=True, normalize=True,
    )
    pl_module = PLMixedCovariatesModule(module, icl, ocl)
    t = torch.arange(icl + 3 * ocl, dtype=torch.float32)
    series = torch.stack([10.0 + 0.5 * t, 20.0 - 0.3 * t], dim=-1)
    covs = torch.sin(t)[:, None]
    past_target = series[None, :icl].repeat(4, 1, 1) + 0.1 * torch.randn(4, icl, n_targets)
    past_covariates = covs[None, :icl].repeat(4, 1, 1)
    future_past_covariates = covs[None, icl:].repeat(4, 1, 1)
    with torch.no_grad():
        preds = pl_module._get_batch_prediction(
            n=3 * ocl,
            input_batch=(past_target, past_covariates, None, None, future_past_covariates, None),
            roll_size=ocl,
        )
    return preds, past_target


preds, past_target = main()
