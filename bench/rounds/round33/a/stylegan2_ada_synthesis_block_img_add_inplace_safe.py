# label: safe
# why: SynthesisBlock accumulates the skip-architecture RGB output with `img = img.add_(y)`; img is the freshly upsampled image returned by upfirdn2d (a strided view of a grouped conv2d output that no backward node saves), so the in-place add is harmless and the generator gets the same gradients as with an out-of-place add, as asked in the issue.
# source: https://github.com/NVlabs/stylegan2-ada-pytorch/issues/115
import math
import torch
import torch.nn.functional as F


def setup_filter(f, normalize=True):
    f = torch.as_tensor(f, dtype=torch.float32)
    f = f.ger(f)  # 4-tap filter -> non-separable 2D
    if normalize:
        f /= f.sum()
    return f


def upfirdn2d(x, f, up=1, down=1, padding=0, gain=1):
    """Reference (non-CUDA) implementation of upfirdn2d."""
    batch_size, num_channels, in_height, in_width = x.shape
    upx = upy = up
    downx = downy = down
    padx0, padx1, pady0, pady1 = padding

    # Upsample by inserting zeros.
    x = x.reshape([batch_size, num_channels, in_height, 1, in_width, 1])
    x = F.pad(x, [0, upx - 1, 0, 0, 0, upy - 1])
    x = x.reshape([batch_size, num_channels, in_height * upy, in_width * upx])

    # Pad or crop.
    x = F.pad(x, [max(padx0, 0), max(padx1, 0), max(pady0, 0), max(pady1, 0)])
    x = x[:, :, max(-pady0, 0): x.shape[2] - max(-pady1, 0), max(-padx0, 0): x.shape[3] - max(-padx1, 0)]

    # Setup filter.
    f = f * (gain ** (f.ndim / 2))
    f = f.to(x.dtype)
    f = f.flip(list(range(f.ndim)))

    # Convolve with the filter.
    f = f[None, None].repeat([num_channels, 1] + [1] * f.ndim)
    x = F.conv2d(input=x, weight=f, groups=num_channels)

    # Downsample by throwing away pixels.
    x = x[:, :, ::downy, ::downx]
    return x


def upsample2d(x, f, up=2, gain=1):
    fw, fh = f.shape[-1], f.shape[0]
    p = [(fw + up - 1) // 2, (fw - up) // 2, (fh + up - 1) // 2, (fh - up) // 2]
    return upfirdn2d(x, f, up=up, padding=p, gain=gain * up * up)


def modulated_conv2d(x, weight, styles, padding=0, demodulate=True):
    batch_size = x.shape[0]
    out_channels, in_channels, kh, kw = weight.shape
    w = weight.unsqueeze(0) * styles.reshape(batch_size, 1, -1, 1, 1)  # [NOIkk]
    if demodulate:
        dcoefs = (w.square().sum(dim=[2, 3, 4]) + 1e-8).rsqrt()
        w = w * dcoefs.reshape(batch_size, -1, 1, 1, 1)
    x = x.reshape(1, -1, *x.shape[2:])
    w = w.reshape(-1, in_channels, kh, kw)
    x = F.conv2d(x, w, padding=padding, groups=batch_size)
    return x.reshape(batch_size, -1, *x.shape[2:])


class FullyConnectedLayer(torch.nn.Module):
    def __init__(self, in_features, out_features, bias_init=0):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn([out_features, in_features]))
        self.bias = torch.nn.Parameter(torch.full([out_features], float(bias_init)))
        self.weight_gain = 1 / math.sqrt(in_features)

    def forward(self, x):
        return torch.addmm(self.bias.unsqueeze(0), x, (self.weight * self.weight_gain).t())


class SynthesisLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, w_dim, resolution, kernel_size=3, up=1,
                 resample_filter=[1, 3, 3, 1]):
        super().__init__()
        self.up = up
        self.padding = kernel_size // 2
        self.register_buffer('resample_filter', setup_filter(resample_filter))
        self.affine = FullyConnectedLayer(w_dim, in_channels, bias_init=1)
        self.weight = torch.nn.Parameter(torch.randn([out_channels, in_channels, kernel_size, kernel_size]))
        self.bias = torch.nn.Parameter(torch.zeros([out_channels]))

    def forward(self, x, w):
        styles = self.affine(w)
        if self.up > 1:
            x = upsample2d(x, self.resample_filter, up=self.up)
        x = modulated_conv2d(x, self.weight, styles, padding=self.padding)
        x = x + self.bias.reshape(1, -1, 1, 1)
        return F.leaky_relu(x, 0.2) * math.sqrt(2)


class ToRGBLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, w_dim, kernel_size=1):
        super().__init__()
        self.affine = FullyConnectedLayer(w_dim, in_channels, bias_init=1)
        self.weight = torch.nn.Parameter(torch.randn([out_channels, in_channels, kernel_size, kernel_size]))
        self.bias = torch.nn.Parameter(torch.zeros([out_channels]))
        self.weight_gain = 1 / math.sqrt(in_channels * (kernel_size ** 2))

    def forward(self, x, w):
        styles = self.affine(w) * self.weight_gain
        x = modulated_conv2d(x, self.weight, styles, demodulate=False)
        return x + self.bias.reshape(1, -1, 1, 1)


class SynthesisBlock(torch.nn.Module):
    def __init__(self, in_channels, out_channels, w_dim, resolution, img_channels, is_last,
                 architecture='skip', resample_filter=[1, 3, 3, 1]):
        super().__init__()
        self.in_channels = in_channels
        self.w_dim = w_dim
        self.resolution = resolution
        self.img_channels = img_channels
        self.is_last = is_last
        self.architecture = architecture
        self.register_buffer('resample_filter', setup_filter(resample_filter))
        self.num_conv = 0
        self.num_torgb = 0

        if in_channels == 0:
            self.const = torch.nn.Parameter(torch.randn([out_channels, resolution, resolution]))

        if in_channels != 0:
            self.conv0 = SynthesisLayer(in_channels, out_channels, w_dim=w_dim, resolution=resolution, up=2,
                                        resample_filter=resample_filter)
            self.num_conv += 1

        self.conv1 = SynthesisLayer(out_channels, out_channels, w_dim=w_dim, resolution=resolution)
        self.num_conv += 1

        if is_last or architecture == 'skip':
            self.torgb = ToRGBLayer(out_channels, img_channels, w_dim=w_dim)
            self.num_torgb += 1

    def forward(self, x, img, ws):
        w_iter = iter(ws.unbind(dim=1))

        # Input.
        if self.in_channels == 0:
            x = self.const.unsqueeze(0).repeat([ws.shape[0], 1, 1, 1])

        # Main layers.
        if self.in_channels == 0:
            x = self.conv1(x, next(w_iter))
        else:
            x = self.conv0(x, next(w_iter))
            x = self.conv1(x, next(w_iter))

        # ToRGB.
        if img is not None:
            img = upsample2d(img, self.resample_filter)
        if self.is_last or self.architecture == 'skip':
            y = self.torgb(x, next(w_iter))
            y = y.to(dtype=torch.float32, memory_format=torch.contiguous_format)
            img = img.add_(y) if img is not None else y

        return x, img


class SynthesisNetwork(torch.nn.Module):
    def __init__(self, w_dim=16, img_resolution=16, img_channels=3):
        super().__init__()
        self.block_resolutions = [4, 8, 16]
        channels = {4: 16, 8: 16, 16: 8}
        self.num_ws = 0
        self.blocks = torch.nn.ModuleList()
        for res in self.block_resolutions:
            in_channels = channels[res // 2] if res > 4 else 0
            block = SynthesisBlock(in_channels, channels[res], w_dim=w_dim, resolution=res,
                                   img_channels=img_channels, is_last=(res == img_resolution))
            self.num_ws += block.num_conv
            self.blocks.append(block)
        self.num_ws += 1

    def forward(self, ws):
        block_ws = []
        w_idx = 0
        for block in self.blocks:
            block_ws.append(ws.narrow(1, w_idx, block.num_conv + block.num_torgb))
            w_idx += block.num_conv
        x = img = None
        for block, cur_ws in zip(self.blocks, block_ws):
            x, img = block(x, img, cur_ws)
        return img


def main():
    torch.manual_seed(0)
    G = SynthesisNetwork()
    D = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.LeakyReLU(0.2),
                            torch.nn.Flatten(), torch.nn.Linear(8 * 8 * 8, 1))
    ws = torch.randn(2, 1, 16).repeat(1, G.num_ws, 1)
    img = G(ws)
    loss_G = F.softplus(-D(img)).mean()
    loss_G.backward()
    return img, loss_G, G


img, loss_G, G = main()
print(img.shape, float(loss_G))
