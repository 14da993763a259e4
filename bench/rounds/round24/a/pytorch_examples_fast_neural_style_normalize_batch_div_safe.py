# label: safe
# why: normalize_batch divides its argument in place (batch.div_(255.0)), but y comes straight out of the last Conv2d, whose output is not saved, and x only reached conv1 through ReflectionPad2d, which saves no values, so both in-place divisions leave backward intact and the caller rebinds both names.
# source: https://github.com/pytorch/examples/commit/645c7c386e62d2fb1d50f4621c1a52645a13869f (fast_neural_style/neural_style/utils.py)
import torch

torch.manual_seed(0)


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class TransformerNet(torch.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, 8, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(8, affine=True)
        self.deconv3 = ConvLayer(8, 3, kernel_size=3, stride=1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.deconv3(y)
        return y


class Vgg16(torch.nn.Module):
    def __init__(self):
        super(Vgg16, self).__init__()
        self.slice1 = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(inplace=True))
        self.slice2 = torch.nn.Sequential(torch.nn.Conv2d(4, 4, 3, padding=1), torch.nn.ReLU(inplace=True))
        for param in self.parameters():
            param.requires_grad = False

    def forward(self, X):
        h_relu1_2 = self.slice1(X)
        h_relu2_2 = self.slice2(h_relu1_2)
        return h_relu1_2, h_relu2_2


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def main():
    transformer = TransformerNet()
    vgg = Vgg16()
    mse_loss = torch.nn.MSELoss()
    style = torch.rand(1, 3, 8, 8) * 255
    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]

    x = torch.rand(2, 3, 8, 8) * 255
    n_batch = len(x)
    y = transformer(x)

    y = normalize_batch(y)
    x = normalize_batch(x)

    features_y = vgg(y)
    features_x = vgg(x)

    content_loss = 1e5 * mse_loss(features_y[1], features_x[1])
    style_loss = 0.
    for ft_y, gm_s in zip(features_y, gram_style):
        gm_y = gram_matrix(ft_y)
        style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
    style_loss *= 1e10
    total_loss = content_loss + style_loss
    total_loss.backward()
    return total_loss.detach(), transformer.conv1.conv2d.weight.grad, transformer.deconv3.conv2d.weight.grad


total_loss, conv1_grad, deconv3_grad = main()
