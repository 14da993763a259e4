# label: hazard raises
# why: parse_output() masks the first tensor of the list it is given in place, and that tensor is the input the post-net's convolution saved, so backward finds it at a newer version.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvNorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=1)

    def forward(self, signal):
        return self.conv(signal)


class Model(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.proj = nn.Linear(channels, channels)
        self.postnet = ConvNorm(channels)

    def parse_output(self, outputs, mask):
        outputs[0].masked_fill_(mask, 0.0)  # <-- IPL001: the post-net's conv saved this tensor
        return outputs

    def forward(self, x, mask):
        mel = self.proj(x).transpose(1, 2)
        post = mel + self.postnet(mel)
        return self.parse_output([mel, post], mask)


model = Model()
x = torch.randn(2, 5, 4)
mask = torch.zeros(2, 4, 5, dtype=torch.bool)
mask[:, :, 3:] = True
mel, post = model(x, mask)
(mel.sum() + post.sum()).backward()
