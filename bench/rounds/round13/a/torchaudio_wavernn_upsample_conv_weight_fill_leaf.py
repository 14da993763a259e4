# label: hazard raises no-twin
# why: the PR's first attempt replaced `conv.weight.data.fill_(...)` by `conv.weight.fill_(...)` in the WaveRNN upsample network, an in-place write to a leaf Parameter that requires grad outside torch.no_grad().
# source: https://github.com/pytorch/audio/pull/1993
import torch
import torch.nn as nn

torch.manual_seed(0)


class _Stretch2d(nn.Module):
    def __init__(self, time_scale, freq_scale):
        super().__init__()
        self.freq_scale = freq_scale
        self.time_scale = time_scale

    def forward(self, specgram):
        return specgram.repeat_interleave(self.freq_scale, -2).repeat_interleave(self.time_scale, -1)


class _UpsampleNetwork(nn.Module):
    def __init__(self, upsample_scales, n_res_block=1, n_freq=4, n_hidden=8, n_output=8, kernel_size=3):
        super().__init__()
        total_scale = 1
        for upsample_scale in upsample_scales:
            total_scale *= upsample_scale
        self.total_scale = total_scale
        self.indent = (kernel_size - 1) // 2 * total_scale
        self.resnet = nn.Sequential(
            nn.Conv1d(n_freq, n_hidden, kernel_size=kernel_size, bias=False),
            nn.BatchNorm1d(n_hidden),
            nn.ReLU(inplace=True),
            nn.Conv1d(n_hidden, n_output, kernel_size=1),
        )
        self.resnet_stretch = _Stretch2d(total_scale, 1)

        up_layers = []
        for scale in upsample_scales:
            stretch = _Stretch2d(scale, 1)
            conv = nn.Conv2d(in_channels=1, out_channels=1, kernel_size=(1, scale * 2 + 1), padding=(0, scale), bias=False)
            conv.weight.fill_(1.0 / (scale * 2 + 1))  # <-- IPL003: in-place fill of a leaf Parameter that requires grad
            up_layers.append(stretch)
            up_layers.append(conv)
        self.upsample_layers = nn.Sequential(*up_layers)

    def forward(self, specgram):
        resnet_output = self.resnet(specgram).unsqueeze(1)
        resnet_output = self.resnet_stretch(resnet_output)
        resnet_output = resnet_output.squeeze(1)

        specgram = specgram.unsqueeze(1)
        upsampling_output = self.upsample_layers(specgram)
        upsampling_output = upsampling_output.squeeze(1)[:, :, self.indent:-self.indent]
        return upsampling_output, resnet_output


upsample = _UpsampleNetwork(upsample_scales=[2, 2])
specgram = torch.randn(2, 4, 10)
up, res = upsample(specgram)
loss = up.pow(2).mean() + res.pow(2).mean()
loss.backward()
