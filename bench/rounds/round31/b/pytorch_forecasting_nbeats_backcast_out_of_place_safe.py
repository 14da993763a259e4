# label: safe
# why: the fix rebinds instead of mutating (`backcast = backcast - backcast_block`, `forecast = forecast + forecast_block`), so the batch's encoder_target that each block's BatchNorm1d saved stays untouched and the caller's batch dict is unchanged.
# source: https://github.com/sktime/pytorch-forecasting/commit/5182d5d5fc2fb767a885766c665bdc540145a6af
from types import SimpleNamespace
from typing import Dict, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def linspace(backcast_length: int, forecast_length: int) -> Tuple[torch.Tensor, torch.Tensor]:
    lin_space = torch.linspace(
        -backcast_length, forecast_length, backcast_length + forecast_length, dtype=torch.float32
    ) / max(backcast_length, forecast_length)
    b_ls = lin_space[:backcast_length]
    f_ls = lin_space[backcast_length:]
    return b_ls, f_ls


class NBEATSBlock(nn.Module):
    def __init__(self, units, thetas_dim, num_block_layers=4, backcast_length=10, forecast_length=5,
                 share_thetas=False, dropout=0.1):
        super().__init__()
        self.units = units
        self.thetas_dim = thetas_dim
        self.backcast_length = backcast_length
        self.forecast_length = forecast_length
        self.share_thetas = share_thetas

        fc_stack = [
            nn.BatchNorm1d(backcast_length),
            nn.Linear(backcast_length, units),
            nn.ReLU(),
            nn.BatchNorm1d(units),
            nn.Dropout(dropout),
        ]
        for _ in range(num_block_layers - 1):
            fc_stack.extend([nn.Linear(units, units), nn.ReLU(), nn.BatchNorm1d(units), nn.Dropout(dropout)])
        self.fc = nn.Sequential(*fc_stack)

        if share_thetas:
            self.theta_f_fc = self.theta_b_fc = nn.Linear(units, thetas_dim, bias=False)
        else:
            self.theta_b_fc = nn.Linear(units, thetas_dim, bias=False)
            self.theta_f_fc = nn.Linear(units, thetas_dim, bias=False)

    def forward(self, x):
        return self.fc(x)


class NBEATSTrendBlock(NBEATSBlock):
    def __init__(self, units, thetas_dim, num_block_layers=4, backcast_length=10, forecast_length=5, dropout=0.1):
        super(NBEATSTrendBlock, self).__init__(
            units=units, thetas_dim=thetas_dim, num_block_layers=num_block_layers,
            backcast_length=backcast_length, forecast_length=forecast_length, share_thetas=True, dropout=dropout,
        )
        backcast_linspace, forecast_linspace = linspace(backcast_length, forecast_length)
        self.register_buffer("T_backcast", torch.stack([backcast_linspace ** i for i in range(thetas_dim)]))
        self.register_buffer("T_forecast", torch.stack([forecast_linspace ** i for i in range(thetas_dim)]))

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        x = super().forward(x)
        backcast = self.theta_b_fc(x).mm(self.T_backcast)
        forecast = self.theta_f_fc(x).mm(self.T_forecast)
        return backcast, forecast


class NBEATSGenericBlock(NBEATSBlock):
    def __init__(self, units, thetas_dim, num_block_layers=4, backcast_length=10, forecast_length=5, dropout=0.1):
        super(NBEATSGenericBlock, self).__init__(
            units=units, thetas_dim=thetas_dim, num_block_layers=num_block_layers,
            backcast_length=backcast_length, forecast_length=forecast_length, dropout=dropout,
        )
        self.backcast_fc = nn.Linear(thetas_dim, backcast_length)
        self.forecast_fc = nn.Linear(thetas_dim, forecast_length)

    def forward(self, x):
        x = super().forward(x)
        theta_b = F.relu(self.theta_b_fc(x))
        theta_f = F.relu(self.theta_f_fc(x))
        return self.backcast_fc(theta_b), self.forecast_fc(theta_f)


class NBeats(nn.Module):
    def __init__(self, stack_types=("T", "G"), num_blocks=(2, 1), num_block_layers=(2, 2), widths=(16, 32),
                 expansion_coefficient_lengths=(3, 8), prediction_length=4, context_length=12, dropout=0.1):
        super().__init__()
        self.hparams = SimpleNamespace(
            stack_types=stack_types, num_blocks=num_blocks, num_block_layers=num_block_layers, widths=widths,
            expansion_coefficient_lengths=expansion_coefficient_lengths, prediction_length=prediction_length,
            context_length=context_length, dropout=dropout,
        )
        # setup stacks
        self.net_blocks = nn.ModuleList()
        for stack_id, stack_type in enumerate(stack_types):
            for _ in range(num_blocks[stack_id]):
                if stack_type == "G":
                    net_block = NBEATSGenericBlock(
                        units=self.hparams.widths[stack_id],
                        thetas_dim=self.hparams.expansion_coefficient_lengths[stack_id],
                        num_block_layers=self.hparams.num_block_layers[stack_id],
                        backcast_length=context_length,
                        forecast_length=prediction_length,
                        dropout=self.hparams.dropout,
                    )
                elif stack_type == "T":
                    net_block = NBEATSTrendBlock(
                        units=self.hparams.widths[stack_id],
                        thetas_dim=self.hparams.expansion_coefficient_lengths[stack_id],
                        num_block_layers=self.hparams.num_block_layers[stack_id],
                        backcast_length=context_length,
                        forecast_length=prediction_length,
                        dropout=self.hparams.dropout,
                    )
                else:
                    raise ValueError(f"Unknown stack type {stack_type}")
                self.net_blocks.append(net_block)

    @property
    def device(self):
        return next(self.parameters()).device

    def forward(self, x: Dict[str, torch.Tensor]):
        target = x["encoder_target"]

        timesteps = self.hparams.context_length + self.hparams.prediction_length
        generic_forecast = [torch.zeros((target.size(0), timesteps), dtype=torch.float32, device=self.device)]
        trend_forecast = [torch.zeros((target.size(0), timesteps), dtype=torch.float32, device=self.device)]

        backcast = target  # initialize backcast
        for i, block in enumerate(self.net_blocks):
            # evaluate block
            backcast_block, forecast_block = block(backcast)

            # add for interpretation
            full = torch.cat([backcast_block.detach(), forecast_block.detach()], dim=1)
            if isinstance(block, NBEATSTrendBlock):
                trend_forecast.append(full)
            else:
                generic_forecast.append(full)

            # update backcast and forecast
            backcast = (
                backcast - backcast_block
            )  # do not use backcast -= backcast_block as this signifies an inline operation
            if i == 0:
                forecast = forecast_block
            else:
                forecast = forecast + forecast_block

        return dict(
            prediction=forecast,
            backcast=backcast,
            trend=torch.stack(trend_forecast, dim=0).sum(0),
            generic=torch.stack(generic_forecast, dim=0).sum(0),
        )


def smape(y_pred, target):
    return (2 * (y_pred - target).abs() / (y_pred.abs() + target.abs() + 1e-8)).mean()


def main():
    model = NBeats()
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    series = torch.sin(torch.arange(16, dtype=torch.float32)[None, :] / 3 + torch.rand(8, 1) * 6) + 2.0
    x = {"encoder_target": series[:, :12].clone()}
    y = series[:, 12:]

    out = model(x)
    loss = smape(out["prediction"], y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach(), out["prediction"].detach(), x["encoder_target"]


loss, prediction, encoder_target = main()
