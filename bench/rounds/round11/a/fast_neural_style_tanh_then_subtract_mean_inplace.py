# label: hazard raises
# why: after a Tanh output layer is added to TransformerNet, utils.subtract_imagenet_mean_batch subtracts the mean in place from y, which Tanh saved for its backward.
# source: https://github.com/abhiskk/fast-neural-style/issues/12
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = nn.ReflectionPad2d(reflection_padding)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        return self.conv2d(out)


class TransformerNet(nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, 8, kernel_size=3, stride=1)
        self.in1 = nn.InstanceNorm2d(8, affine=True)
        self.conv2 = ConvLayer(8, 3, kernel_size=3, stride=1)
        self.relu = nn.ReLU()
        self.tanh = nn.Tanh()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.conv2(y)
        y = self.tanh(y)
        return y


class Vgg(nn.Module):
    def __init__(self):
        super(Vgg, self).__init__()
        self.slice1 = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())

    def forward(self, X):
        return [self.slice1(X)]


def subtract_imagenet_mean_batch(batch):
    """Subtract ImageNet mean pixel-wise from a BGR image."""
    mean = torch.zeros_like(batch)
    mean[:, 0, :, :] = 103.939
    mean[:, 1, :, :] = 116.779
    mean[:, 2, :, :] = 123.680
    batch -= mean  # <-- IPL001: y is the Tanh output, which TanhBackward saved
    return batch


transformer = TransformerNet()
vgg = Vgg()
mse_loss = nn.MSELoss()
optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)

x = torch.rand(2, 3, 8, 8) * 255.0
optimizer.zero_grad()
y = transformer(x)
y = subtract_imagenet_mean_batch(y)
xc = subtract_imagenet_mean_batch(x.clone())
features_y = vgg(y)
features_xc = vgg(xc)
content_loss = mse_loss(features_y[0], features_xc[0].detach())
content_loss.backward()
optimizer.step()
