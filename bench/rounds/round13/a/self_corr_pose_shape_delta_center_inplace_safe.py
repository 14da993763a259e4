# label: safe
# why: `shape_delta -= shape_delta.mean(1)` edits a slice of a Linear output that no backward function saved, so autograd handles it correctly (the maintainers blamed the reporter's environment).
# source: https://github.com/kywind/self-corr-pose/issues/5
import torch
import torch.nn as nn

torch.manual_seed(0)


class CondNeRFModel(nn.Module):
    def __init__(self, num_layers=2, hidden_size=16, out_channel=3, codesize=4):
        super().__init__()
        self.layer1 = nn.Linear(3 + codesize, hidden_size)
        self.layers = nn.ModuleList([nn.Linear(hidden_size, hidden_size) for _ in range(num_layers - 1)])
        self.fc_out = nn.Linear(hidden_size, out_channel + 1)
        self.relu = nn.functional.relu

    def forward(self, x, code):
        x = self.relu(self.layer1(torch.cat([x, code], -1)))
        for layer in self.layers:
            x = self.relu(layer(x))
        return self.fc_out(x)


def run_network(network_fn, pts, chunksize, code=None):
    pts_flat = pts.reshape((-1, pts.shape[-1]))
    code_flat = code[:, None].expand(pts.shape[0], pts.shape[1], code.shape[-1]).reshape(-1, code.shape[-1])
    batches = [(pts_flat[i:i + chunksize], code_flat[i:i + chunksize]) for i in range(0, pts_flat.shape[0], chunksize)]
    preds = [network_fn(b, c) for b, c in batches]
    radiance_field = torch.cat(preds, dim=0)
    radiance_field = torch.reshape(radiance_field, list(pts.shape[:-1]) + [radiance_field.shape[-1]])
    return radiance_field


class ShapePredictor(nn.Module):
    def __init__(self, codedim=4, no_deform=False, deform_ratio=1.0):
        super(ShapePredictor, self).__init__()
        self.shapenerf = CondNeRFModel(num_layers=2, out_channel=3, codesize=codedim)
        self.no_deform = no_deform
        self.deform_ratio = deform_ratio

    def forward(self, mean_v, shape_code):
        if self.no_deform:
            return mean_v
        else:
            shape_delta = run_network(self.shapenerf, mean_v.detach(), 7, code=shape_code)[:, :, :-1]
            shape_delta -= shape_delta.mean(1, keepdims=True)
            pred_v = mean_v + shape_delta * self.deform_ratio
            return pred_v


predictor = ShapePredictor()
mean_v = torch.randn(2, 10, 3, requires_grad=True)
shape_code = torch.randn(2, 4, requires_grad=True)
pred_v = predictor(mean_v, shape_code)
target_v = torch.randn(2, 10, 3)
total_loss = (pred_v - target_v).pow(2).mean(-1)
total_loss.mean().backward()
