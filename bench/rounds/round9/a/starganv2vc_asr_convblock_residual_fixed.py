# label: safe
# why: the PR replaces `x += res` with `x = x + res`, so the ReLU output that eval-mode Dropout passes through stays intact for backward
# source: https://github.com/yl4579/StarGANv2-VC/pull/86
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _get_activation_fn(activ):
    if activ == 'relu':
        return nn.ReLU()
    elif activ == 'lrelu':
        return nn.LeakyReLU(0.2)
    raise RuntimeError('Unexpected activ type %s' % activ)


class ConvNorm(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, padding=0, dilation=1):
        super(ConvNorm, self).__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=kernel_size,
                              padding=padding, dilation=dilation)

    def forward(self, signal):
        return self.conv(signal)


class ConvBlock(nn.Module):
    def __init__(self, hidden_dim, n_conv=3, dropout_p=0.2, activ='relu'):
        super().__init__()
        self._n_groups = 2
        self.blocks = nn.ModuleList([
            self._get_conv(hidden_dim, dilation=3 ** i, activ=activ, dropout_p=dropout_p)
            for i in range(n_conv)])

    def forward(self, x):
        for block in self.blocks:
            res = x
            x = block(x)
            x = x + res
        return x

    def _get_conv(self, hidden_dim, dilation, activ='relu', dropout_p=0.2):
        layers = [
            ConvNorm(hidden_dim, hidden_dim, kernel_size=3, padding=dilation, dilation=dilation),
            _get_activation_fn(activ),
            nn.GroupNorm(num_groups=self._n_groups, num_channels=hidden_dim),
            nn.Dropout(p=dropout_p),
            ConvNorm(hidden_dim, hidden_dim, kernel_size=3, padding=1, dilation=1),
            _get_activation_fn(activ),
            nn.Dropout(p=dropout_p)
        ]
        return nn.Sequential(*layers)


class ASRCNN(nn.Module):
    def __init__(self, input_dim=8, hidden_dim=8, n_token=5, n_layers=2):
        super().__init__()
        self.to_mfcc = nn.Conv1d(input_dim, hidden_dim, 1)
        self.cnns = nn.Sequential(*[ConvBlock(hidden_dim, n_conv=2) for _ in range(n_layers)])
        self.ctc_linear = nn.Linear(hidden_dim, n_token)

    def get_feature(self, x):
        x = self.to_mfcc(x.squeeze(1))
        x = self.cnns(x)
        return x


generator = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1))
asr_model = ASRCNN()
asr_model.eval()
for p in asr_model.parameters():
    p.requires_grad_(False)

x_real = torch.randn(2, 1, 8, 12)
x_fake = generator(x_real)

with torch.no_grad():
    ASR_real = asr_model.get_feature(x_real)
ASR_fake = asr_model.get_feature(x_fake)
loss_asr = F.smooth_l1_loss(ASR_fake, ASR_real)
loss_asr.backward()
