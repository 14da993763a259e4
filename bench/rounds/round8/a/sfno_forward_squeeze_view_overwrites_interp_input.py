# label: hazard silent
# why: SFNO._forward squeezes the caller's tensor to a view and writes each step's prediction into it, so the interpolation wrapper's saved start state x0 becomes the end state and every interpolated frame is wrong.
# source: https://github.com/NVIDIA/earth2studio/pull/568
import torch
import torch.nn as nn

torch.manual_seed(0)


class SFNOCore(nn.Module):
    def __init__(self, c=3):
        super().__init__()
        self.net = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x, t, normalized_data=False):
        return x + 0.5 * torch.tanh(self.net(x))


class SFNO:
    def __init__(self):
        self.model = SFNOCore().eval()

    @torch.inference_mode()
    def _forward(self, x, coords):
        output_coords = dict(coords, lead_time=coords["lead_time"] + 6)
        x = x.squeeze(2)
        for j in range(x.shape[0]):
            for i in range(x.shape[1]):
                x[j, i:i + 1] = self.model(x[j, i:i + 1], coords["time"], normalized_data=False)  # <-- IPL004: writes the prediction into the caller's tensor through a squeeze view
        x = x.unsqueeze(2)
        return x, output_coords

    def __call__(self, x, coords):
        return self._forward(x, coords)


class InterpModAFNO:
    def __init__(self, px_model, num_interp_steps=3):
        self.px_model = px_model
        self.num_interp_steps = num_interp_steps
        self.interp_net = nn.Conv2d(2 * 3 + 1, 3, 1).eval()

    @torch.inference_mode()
    def _interpolate(self, x0, x1, frac):
        b, t, l, c, h, w = x0.shape
        tt = torch.full((b * t * l, 1, h, w), frac)
        inp = torch.cat([x0.reshape(-1, c, h, w), x1.reshape(-1, c, h, w), tt], 1)
        return ((1 - frac) * x0 + frac * x1 + 0.1 * self.interp_net(inp).view_as(x0))

    def create_iterator(self, x, coords):
        yield x, coords
        while True:
            x0 = x
            x1, coords1 = self.px_model(x0, coords)
            for k in range(1, self.num_interp_steps + 1):
                frac = k / self.num_interp_steps
                yield self._interpolate(x0, x1, frac), dict(coords, lead_time=coords["lead_time"] + 2 * k)
            x, coords = x1, coords1


model = InterpModAFNO(SFNO())
x_init = torch.rand(1, 1, 1, 3, 4, 4)
coords = {"time": 0, "lead_time": 0}
iterator = model.create_iterator(x_init, coords)
frames = []
for step in range(4):
    xi, ci = next(iterator)
    frames.append(xi.clone())
frames = torch.stack(frames)
initial_condition = x_init
