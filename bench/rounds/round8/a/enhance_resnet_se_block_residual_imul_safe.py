# label: safe
# why: the fixed ConvBlock still scales the residual in place with its squeeze-and-excitation weights, but the SE block now reduces with sum()/count, and no op that saved the conv output needs it afterwards.
# source: https://github.com/speechbrain/speechbrain/commit/4389ce30aa4c57b26823699b88ef20a7e8043a95
import torch

torch.manual_seed(0)


class SEblock(torch.nn.Module):
    def __init__(self, input_size):
        super().__init__()
        self.linear1 = torch.nn.Linear(input_size, input_size)
        self.linear2 = torch.nn.Linear(input_size, input_size)

    def forward(self, x):
        # torch.mean causes weird inplace error
        # x = torch.mean(x, dim=(1, 2), keepdim=True)
        count = x.size(1) * x.size(2)
        x = torch.sum(x, dim=(1, 2), keepdim=True) / count
        x = self.linear1(x)
        x = torch.nn.functional.relu(x)
        x = self.linear2(x)
        return torch.sigmoid(x)


class Conv2d(torch.nn.Module):
    """channels-last conv wrapper, as in speechbrain.nnet.CNN.Conv2d"""

    def __init__(self, in_channels, out_channels, kernel_size, stride=(1, 1)):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x.transpose(1, -1)).transpose(1, -1)


class ConvBlock(torch.nn.Module):
    def __init__(self, in_channels, channels, activation=torch.nn.GELU(), dropout=0.1):
        super().__init__()
        self.activation = activation
        self.downsample = Conv2d(in_channels, channels, 3, stride=(1, 1))
        self.conv1 = Conv2d(channels, channels, 3)
        self.norm1 = torch.nn.LayerNorm(channels)
        self.conv2 = Conv2d(channels, channels, 3)
        self.norm2 = torch.nn.LayerNorm(channels)
        self.dropout = torch.nn.Dropout(p=dropout)
        self.se_block = SEblock(input_size=channels)

    def forward(self, x):
        x = self.downsample(x)
        residual = self.activation(x)
        residual = self.norm1(residual)
        residual = self.dropout(residual)
        residual = self.conv1(residual)
        residual = self.activation(residual)
        residual = self.norm2(residual)
        residual = self.dropout(residual)
        residual = self.conv2(residual)
        residual *= self.se_block(residual)
        return x + residual


class EnhanceResnet(torch.nn.Module):
    def __init__(self, n_freq=9, channel_counts=(4, 4), mask_weight=0.99):
        super().__init__()
        self.mask_weight = mask_weight
        blocks = []
        in_ch = 1
        for ch in channel_counts:
            blocks.append(ConvBlock(in_ch, ch))
            in_ch = ch
        self.CNN = torch.nn.Sequential(*blocks)
        self.DNN = torch.nn.Linear(in_ch * n_freq, n_freq)

    def forward(self, noisy_mag):
        log_mag = torch.log1p(noisy_mag)
        feats = self.CNN(log_mag.unsqueeze(-1))
        mask = self.DNN(feats.flatten(2)).clamp(min=0, max=1)
        masked_spec = self.mask_weight * mask * noisy_mag
        masked_spec += (1 - self.mask_weight) * noisy_mag
        return masked_spec, torch.log1p(masked_spec)


model = EnhanceResnet()
model.train()
noisy_mag = torch.rand(2, 5, 9)
clean_mag = torch.rand(2, 5, 9)
enhanced, enhanced_feats = model(noisy_mag)
loss = torch.nn.functional.l1_loss(enhanced_feats, torch.log1p(clean_mag))
loss.backward()
