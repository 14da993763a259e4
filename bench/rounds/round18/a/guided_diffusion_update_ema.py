# label: safe no-twin
# why: update_ema blends the online parameters into the EMA copy through targ.detach() after the optimizer step; the EMA parameters are in no live graph, so the in-place mul_/add_ are harmless.
# source: https://github.com/openai/guided-diffusion/issues/26
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


def update_ema(target_params, source_params, rate=0.99):
    """
    Update target parameters to be closer to those of source parameters using
    an exponential moving average.
    """
    for targ, src in zip(target_params, source_params):
        targ.detach().mul_(rate).add_(src, alpha=1 - rate)


class TinyUNet(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.inp = nn.Conv2d(1, ch, 3, padding=1)
        self.time_embed = nn.Linear(1, ch)
        self.out = nn.Conv2d(ch, 1, 3, padding=1)

    def forward(self, x, t):
        h = self.inp(x) + self.time_embed(t[:, None].float())[:, :, None, None]
        return self.out(torch.nn.functional.silu(h))


class TrainLoop:
    def __init__(self, model, ema_rate=(0.9, 0.99)):
        self.model = model
        self.ema_rate = list(ema_rate)
        self.master_params = list(self.model.parameters())
        self.ema_params = [copy.deepcopy(self.master_params) for _ in range(len(self.ema_rate))]
        self.opt = torch.optim.AdamW(self.master_params, lr=1e-3)

    def run_step(self, batch, t):
        self.opt.zero_grad()
        noise = torch.randn_like(batch)
        x_t = batch * 0.9 + noise * 0.1
        loss = ((self.model(x_t, t) - noise) ** 2).mean()
        loss.backward()
        self.opt.step()
        self._update_ema()
        return loss

    def _update_ema(self):
        for rate, params in zip(self.ema_rate, self.ema_params):
            update_ema(params, self.master_params, rate=rate)


model = TinyUNet()
loop = TrainLoop(model)
for step in range(3):
    batch = torch.randn(2, 1, 6, 6)
    t = torch.randint(0, 10, (2,))
    loss = loop.run_step(batch, t)
ema_fast = torch.cat([p.detach().flatten() for p in loop.ema_params[0]])
ema_slow = torch.cat([p.detach().flatten() for p in loop.ema_params[1]])
