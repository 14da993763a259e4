# label: safe
# why: the style-mixing slice assignment writes into ws, the fresh output of repeat(), which no backward formula saved, and the w_avg copy_ only updates a buffer from a detached mean, so both in-place writes leave the generator gradients intact.
# source: https://github.com/facebookresearch/StyleNeRF/pull/41 (pre-fix training/loss.py run_G, commit 305d1db45b98d3bba423921ba76bb8fcca2ffcf3^)
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


def normalize_2nd_moment(x, dim=1, eps=1e-8):
    return x * (x.square().mean(dim=dim, keepdim=True) + eps).rsqrt()


class FullyConnectedLayer(nn.Module):
    def __init__(self, in_features, out_features, activation='linear', lr_multiplier=1, bias_init=0):
        super().__init__()
        self.activation = activation
        self.weight = nn.Parameter(torch.randn([out_features, in_features]) / lr_multiplier)
        self.bias = nn.Parameter(torch.full([out_features], float(bias_init)))
        self.weight_gain = lr_multiplier / math.sqrt(in_features)
        self.bias_gain = lr_multiplier

    def forward(self, x):
        w = self.weight * self.weight_gain
        b = self.bias * self.bias_gain
        x = torch.addmm(b.unsqueeze(0), x, w.t())
        if self.activation == 'lrelu':
            x = torch.nn.functional.leaky_relu(x, 0.2) * math.sqrt(2)
        return x


class MappingNetwork(nn.Module):
    def __init__(self, z_dim, c_dim, w_dim, num_ws, num_layers=4, w_avg_beta=0.995):
        super().__init__()
        self.z_dim, self.c_dim, self.w_dim, self.num_ws = z_dim, c_dim, w_dim, num_ws
        self.num_layers = num_layers
        self.w_avg_beta = w_avg_beta
        features = [z_dim] + [w_dim] * num_layers
        for idx in range(num_layers):
            setattr(self, f'fc{idx}', FullyConnectedLayer(features[idx], features[idx + 1], activation='lrelu', lr_multiplier=0.01))
        self.register_buffer('w_avg', torch.zeros([w_dim]))

    def forward(self, z=None, c=None, truncation_psi=1, truncation_cutoff=None, skip_w_avg_update=False, **unused_kwargs):
        x = normalize_2nd_moment(z.to(torch.float32))
        for idx in range(self.num_layers):
            layer = getattr(self, f'fc{idx}')
            x = layer(x)

        # Update moving average of W.
        if self.w_avg_beta is not None and self.training and not skip_w_avg_update:
            self.w_avg.copy_(x.detach().mean(dim=0).lerp(self.w_avg, self.w_avg_beta))

        # Broadcast.
        if self.num_ws is not None:
            x = x.unsqueeze(1).repeat([1, self.num_ws, 1])

        # Apply truncation.
        if truncation_psi != 1:
            if self.num_ws is None or truncation_cutoff is None:
                x = self.w_avg.lerp(x, truncation_psi)
            else:
                x[:, :truncation_cutoff] = self.w_avg.lerp(x[:, :truncation_cutoff], truncation_psi)
        return x


class SynthesisNetwork(nn.Module):
    def __init__(self, w_dim, num_ws, img_channels=3, res=4):
        super().__init__()
        self.affine = nn.Linear(w_dim, img_channels * res * res)
        self.num_ws, self.res, self.img_channels = num_ws, res, img_channels

    def forward(self, ws, **synthesis_kwargs):
        styles = self.affine(ws).view(ws.shape[0], self.num_ws, self.img_channels, self.res, self.res)
        return {'img': torch.tanh(styles.sum(dim=1))}


class StyleGAN2Loss:
    def __init__(self, G_mapping, G_synthesis, style_mixing_prob=0.9):
        self.G_mapping = G_mapping
        self.G_synthesis = G_synthesis
        self.style_mixing_prob = style_mixing_prob
        self.generator_mode = 'random_z_random_c'

    def run_G(self, z, c, sync, img=None, mode=None, get_loss=True):
        synthesis_kwargs = {'camera_mode': 'random'}
        ws = self.G_mapping(z, c)
        if self.style_mixing_prob > 0:
            cutoff = torch.empty([], dtype=torch.int64, device=ws.device).random_(1, ws.shape[1])
            cutoff = torch.where(torch.rand([], device=ws.device) < self.style_mixing_prob, cutoff, torch.full_like(cutoff, ws.shape[1]))
            ws[:, cutoff:] = self.G_mapping(torch.randn_like(z), c, skip_w_avg_update=True)[:, cutoff:]
        out = self.G_synthesis(ws, **synthesis_kwargs)
        return out, ws


def main():
    G_mapping = MappingNetwork(z_dim=8, c_dim=0, w_dim=8, num_ws=6)
    G_synthesis = SynthesisNetwork(w_dim=8, num_ws=6)
    loss = StyleGAN2Loss(G_mapping, G_synthesis)
    z = torch.randn(4, 8)
    out, ws = loss.run_G(z, None, sync=True)
    loss_Gmain = torch.nn.functional.softplus(-out['img'].mean(dim=[1, 2, 3]))
    loss_Gmain.mean().backward()
    return out['img'].detach(), G_mapping.fc0.weight.grad, G_mapping.w_avg.clone()


img, fc0_grad, w_avg = main()
