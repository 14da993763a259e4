# label: safe no-twin
# why: EMA.update_moving_average runs under @torch.no_grad() on an ema_model whose parameters have requires_grad_(False), so ma_params.sub_(difference) is an in-place update of tensors that are in no graph, done after the online model's backward.
# source: https://github.com/lucidrains/ema-pytorch/commit/1f4dc2e5dfeb3a2ea00d1d020d1e5bf0a8d91402 ("ema_model doesnt need grads")
import copy
import torch
from torch import nn

torch.manual_seed(0)


def exists(val):
    return val is not None


def clamp(value, min_value=None, max_value=None):
    if exists(min_value):
        value = max(value, min_value)
    if exists(max_value):
        value = min(value, max_value)
    return value


class EMA(nn.Module):
    def __init__(self, model, beta=0.99, update_after_step=2, update_every=1, inv_gamma=1.0, power=2 / 3, min_value=0.0):
        super().__init__()
        self.beta = beta
        self.online_model = model
        self.ema_model = copy.deepcopy(model)
        self.ema_model.requires_grad_(False)
        self.update_every = update_every
        self.update_after_step = update_after_step
        self.inv_gamma = inv_gamma
        self.power = power
        self.min_value = min_value
        self.register_buffer('initted', torch.Tensor([False]))
        self.register_buffer('step', torch.tensor([0]))

    def copy_params_from_model_to_ema(self):
        for ma_param, current_param in zip(list(self.ema_model.parameters()), list(self.online_model.parameters())):
            ma_param.data.copy_(current_param.data)

    def get_current_decay(self):
        epoch = clamp(self.step.item() - self.update_after_step - 1, min_value=0)
        value = 1 - (1 + epoch / self.inv_gamma) ** - self.power
        if epoch <= 0:
            return 0.
        return clamp(value, min_value=self.min_value, max_value=self.beta)

    def update(self):
        step = self.step.item()
        self.step += 1
        if (step % self.update_every) != 0:
            return
        if step <= self.update_after_step:
            self.copy_params_from_model_to_ema()
            return
        if not self.initted.item():
            self.copy_params_from_model_to_ema()
            self.initted.data.copy_(torch.Tensor([True]))
        self.update_moving_average(self.ema_model, self.online_model)

    @torch.no_grad()
    def update_moving_average(self, ma_model, current_model):
        current_decay = self.get_current_decay()
        for current_params, ma_params in zip(list(current_model.parameters()), list(ma_model.parameters())):
            difference = ma_params.data - current_params.data
            difference.mul_(1.0 - current_decay)
            ma_params.sub_(difference)

    def __call__(self, *args, **kwargs):
        return self.ema_model(*args, **kwargs)


def main():
    net = nn.Sequential(nn.Linear(6, 16), nn.SiLU(), nn.Linear(16, 6))
    ema = EMA(net)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(6):
        x = torch.randn(8, 6)
        loss = (net(x) - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.update()
    with torch.no_grad():
        ema_out = ema(torch.ones(2, 6))
    return ema_out, ema.ema_model[0].weight.clone()


ema_out, ema_weight = main()
