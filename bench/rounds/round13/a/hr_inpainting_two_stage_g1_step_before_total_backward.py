# label: hazard raises no-twin
# why: first_MaskL1Loss is backpropagated and optimizer_g1.step() updates the coarse generator in place, then the same first_MaskL1Loss (graph still holding the old coarse weights) is summed into the total loss and backpropagated again.
# source: https://github.com/wangyx240/High-Resolution-Image-Inpainting-GAN/issues/7
import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, activation='lrelu'):
        super(GatedConv2d, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.mask_conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.activation = nn.LeakyReLU(0.2) if activation == 'lrelu' else None
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        conv = self.conv2d(x)
        mask = self.mask_conv2d(x)
        gated_mask = self.sigmoid(mask)
        if self.activation:
            conv = self.activation(conv)
        return conv * gated_mask


class CoarseGenerator(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.net = nn.Sequential(GatedConv2d(4, ch, 3, 1, 1), GatedConv2d(ch, 3, 3, 1, 1, activation='none'))

    def forward(self, img, mask):
        first_in = torch.cat((img * (1 - mask) + mask, mask), 1)
        return torch.tanh(self.net(first_in))


class RefineGenerator(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.net = nn.Sequential(GatedConv2d(4, ch, 3, 1, 1), GatedConv2d(ch, 3, 3, 1, 1, activation='none'))

    def forward(self, first_out, img, mask):
        second_in = img * (1 - mask) + first_out * mask
        return torch.tanh(self.net(torch.cat((second_in, mask), 1)))


class Discriminator(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(4, ch, 3, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(ch, 1, 3, 1, 1))

    def forward(self, img, mask):
        return self.net(torch.cat((img, mask), 1))


generator_coarse = CoarseGenerator()
generator_refine = RefineGenerator()
discriminator = Discriminator()
optimizer_g1 = torch.optim.Adam(generator_coarse.parameters(), lr=1e-4)
optimizer_g = torch.optim.Adam(list(generator_coarse.parameters()) + list(generator_refine.parameters()), lr=1e-4)
L1Loss = nn.L1Loss()
lambda_l1 = 10.0

img = torch.rand(2, 3, 8, 8) * 2 - 1
mask = (torch.rand(2, 1, 8, 8) > 0.7).float()

# Generator output
first_out = generator_coarse(img, mask)
second_out = generator_refine(first_out, img, mask)
first_out_wholeimg = img * (1 - mask) + first_out * mask
second_out_wholeimg = img * (1 - mask) + second_out * mask

first_MaskL1Loss = L1Loss(first_out_wholeimg, img)
second_MaskL1Loss = L1Loss(second_out_wholeimg, img)

optimizer_g1.zero_grad()
first_MaskL1Loss.backward(retain_graph=True)
optimizer_g1.step()  # <-- IPL001: updates the coarse generator in place while first_MaskL1Loss's graph still needs its old weights

fake_scalar = discriminator(second_out_wholeimg, mask)
GAN_Loss = -torch.mean(fake_scalar)
loss = 0.5 * lambda_l1 * first_MaskL1Loss + lambda_l1 * second_MaskL1Loss + GAN_Loss
optimizer_g.zero_grad()
loss.backward()
optimizer_g.step()
