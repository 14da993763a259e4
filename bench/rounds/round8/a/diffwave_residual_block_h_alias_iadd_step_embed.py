# label: hazard raises
# why: Residual_block aliases h = x and adds the diffusion-step embedding with `h += part_t`, which for the first block modifies the init_conv ReLU output that ReLU saved for backward.
# source: https://github.com/philsyn/DiffWave-Vocoder/issues/2
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def calc_diffusion_step_embedding(diffusion_steps, diffusion_step_embed_dim_in):
    half_dim = diffusion_step_embed_dim_in // 2
    _embed = np.log(10000) / (half_dim - 1)
    _embed = torch.exp(torch.arange(half_dim) * -_embed)
    _embed = diffusion_steps * _embed
    return torch.cat((torch.sin(_embed), torch.cos(_embed)), 1)


def swish(x):
    return x * torch.sigmoid(x)


class Conv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, dilation=1):
        super(Conv, self).__init__()
        self.padding = dilation * (kernel_size - 1) // 2
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, dilation=dilation, padding=self.padding)
        nn.init.kaiming_normal_(self.conv.weight)

    def forward(self, x):
        return self.conv(x)


class ZeroConv1d(nn.Module):
    def __init__(self, in_channel, out_channel):
        super(ZeroConv1d, self).__init__()
        self.conv = nn.Conv1d(in_channel, out_channel, kernel_size=1, padding=0)
        self.conv.weight.data.zero_()
        self.conv.bias.data.zero_()

    def forward(self, x):
        return self.conv(x)


class Residual_block(nn.Module):
    def __init__(self, res_channels, skip_channels, dilation, diffusion_step_embed_dim_out, n_mels=4):
        super(Residual_block, self).__init__()
        self.res_channels = res_channels
        self.fc_t = nn.Linear(diffusion_step_embed_dim_out, self.res_channels)
        self.dilated_conv_layer = Conv(self.res_channels, 2 * self.res_channels, kernel_size=3, dilation=dilation)
        self.upsample_conv2d = torch.nn.ModuleList()
        for s in [2, 2]:
            conv_trans2d = torch.nn.ConvTranspose2d(1, 1, (3, 2 * s), padding=(1, s // 2), stride=(1, s))
            torch.nn.init.kaiming_normal_(conv_trans2d.weight)
            self.upsample_conv2d.append(conv_trans2d)
        self.mel_conv = Conv(n_mels, 2 * self.res_channels, kernel_size=1)
        self.res_conv = nn.Conv1d(res_channels, res_channels, kernel_size=1)
        self.skip_conv = nn.Conv1d(res_channels, skip_channels, kernel_size=1)

    def forward(self, input_data):
        x, mel_spec, diffusion_step_embed = input_data
        h = x
        B, C, L = x.shape
        assert C == self.res_channels

        part_t = self.fc_t(diffusion_step_embed)
        part_t = part_t.view([B, self.res_channels, 1])
        h += part_t  # <-- IPL001: h aliases x, the init_conv ReLU output saved for backward

        h = self.dilated_conv_layer(h)

        mel_spec = torch.unsqueeze(mel_spec, dim=1)
        mel_spec = F.leaky_relu(self.upsample_conv2d[0](mel_spec), 0.4)
        mel_spec = F.leaky_relu(self.upsample_conv2d[1](mel_spec), 0.4)
        mel_spec = torch.squeeze(mel_spec, dim=1)
        if mel_spec.size(2) > L:
            mel_spec = mel_spec[:, :, :L]
        mel_spec = self.mel_conv(mel_spec)
        h += mel_spec

        out = torch.tanh(h[:, :self.res_channels, :]) * torch.sigmoid(h[:, self.res_channels:, :])
        res = self.res_conv(out)
        skip = self.skip_conv(out)
        return (x + res) * math.sqrt(0.5), skip


class Residual_group(nn.Module):
    def __init__(self, res_channels, skip_channels, num_res_layers, dilation_cycle, dim_in, dim_mid, dim_out):
        super(Residual_group, self).__init__()
        self.num_res_layers = num_res_layers
        self.diffusion_step_embed_dim_in = dim_in
        self.fc_t1 = nn.Linear(dim_in, dim_mid)
        self.fc_t2 = nn.Linear(dim_mid, dim_out)
        self.residual_blocks = nn.ModuleList()
        for n in range(self.num_res_layers):
            self.residual_blocks.append(
                Residual_block(res_channels, skip_channels, dilation=2 ** (n % dilation_cycle), diffusion_step_embed_dim_out=dim_out)
            )

    def forward(self, input_data):
        x, mel_spectrogram, diffusion_steps = input_data
        diffusion_step_embed = calc_diffusion_step_embedding(diffusion_steps, self.diffusion_step_embed_dim_in)
        diffusion_step_embed = swish(self.fc_t1(diffusion_step_embed))
        diffusion_step_embed = swish(self.fc_t2(diffusion_step_embed))
        h = x
        skip = 0
        for n in range(self.num_res_layers):
            h, skip_n = self.residual_blocks[n]((h, mel_spectrogram, diffusion_step_embed))
            skip += skip_n
        return skip * math.sqrt(1.0 / self.num_res_layers)


class WaveNet_vocoder(nn.Module):
    def __init__(self, in_channels=1, res_channels=4, skip_channels=4, out_channels=1, num_res_layers=2, dilation_cycle=2):
        super(WaveNet_vocoder, self).__init__()
        self.init_conv = nn.Sequential(Conv(in_channels, res_channels, kernel_size=1), nn.ReLU())
        self.residual_layer = Residual_group(res_channels, skip_channels, num_res_layers, dilation_cycle, 8, 16, 16)
        self.final_conv = nn.Sequential(Conv(skip_channels, skip_channels, kernel_size=1), nn.ReLU(), ZeroConv1d(skip_channels, out_channels))

    def forward(self, input_data):
        audio, mel_spectrogram, diffusion_steps = input_data
        x = audio
        x = self.init_conv(x)
        x = self.residual_layer((x, mel_spectrogram, diffusion_steps))
        return self.final_conv(x)


def training_loss(net, loss_fn, X, diffusion_hyperparams):
    T, Alpha_bar = diffusion_hyperparams["T"], diffusion_hyperparams["Alpha_bar"]
    mel_spectrogram, audio = X
    B, C, L = audio.shape
    diffusion_steps = torch.randint(T, size=(B, 1, 1))
    z = torch.normal(0, 1, size=audio.shape)
    transformed_X = torch.sqrt(Alpha_bar[diffusion_steps]) * audio + torch.sqrt(1 - Alpha_bar[diffusion_steps]) * z
    epsilon_theta = net((transformed_X, mel_spectrogram, diffusion_steps.view(B, 1)))
    return loss_fn(epsilon_theta, z)


T = 10
Beta = torch.linspace(1e-4, 0.02, T)
diffusion_hyperparams = {"T": T, "Alpha_bar": torch.cumprod(1 - Beta, 0)}
net = WaveNet_vocoder()
optimizer = torch.optim.Adam(net.parameters(), lr=2e-4)
mel_spectrogram = torch.randn(2, 4, 4)
audio = torch.randn(2, 1, 16)
optimizer.zero_grad()
loss = training_loss(net, nn.MSELoss(), (mel_spectrogram, audio), diffusion_hyperparams)
loss.backward()
optimizer.step()
