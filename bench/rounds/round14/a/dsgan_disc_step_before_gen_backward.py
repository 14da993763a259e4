# label: hazard raises no-twin
# why: fake_tex is computed once per iteration; optimizer_d.step() updates the discriminator weights in place after d_tex_loss.backward(retain_graph=True), and g_loss then backpropagates through that same discriminator graph.
# source: https://github.com/manuelfritsche/real-world-sr/issues/18 (code: dsgan/train.py @ d3789035dc74926ca5bc6e0c1cb376900194d1a8)
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class FilterLow(nn.Module):
    def __init__(self, kernel_size=5):
        super().__init__()
        self.filter = nn.AvgPool2d(kernel_size=kernel_size, stride=1, padding=kernel_size // 2, count_include_pad=False)

    def forward(self, img):
        return self.filter(img)


class FilterHigh(nn.Module):
    def __init__(self, kernel_size=5):
        super().__init__()
        self.filter_low = FilterLow(kernel_size)

    def forward(self, img):
        return img - self.filter_low(img)


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.prelu = nn.PReLU()
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        residual = self.prelu(self.conv1(x))
        return x + self.conv2(residual)


class Generator(nn.Module):
    def __init__(self, n_res_blocks=2, n_feats=8):
        super().__init__()
        self.block_input = nn.Sequential(nn.Conv2d(3, n_feats, 3, padding=1), nn.PReLU())
        self.res_blocks = nn.ModuleList([ResidualBlock(n_feats) for _ in range(n_res_blocks)])
        self.block_output = nn.Conv2d(n_feats, 3, 3, padding=1)

    def forward(self, x):
        block = self.block_input(x)
        for res_block in self.res_blocks:
            block = res_block(block)
        return torch.sigmoid(self.block_output(block))


class Discriminator(nn.Module):
    def __init__(self, recursions=1, stride=1, kernel_size=5):
        super().__init__()
        self.filter = FilterHigh(kernel_size)
        layers = [nn.Conv2d(3, 16, 3, stride=stride, padding=1), nn.LeakyReLU(0.2)]
        for _ in range(recursions):
            layers += [nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.LeakyReLU(0.2)]
        layers += [nn.Conv2d(16, 1, 3, padding=1)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(self.filter(x))


def discriminator_loss(real_tex, fake_tex):
    real_loss = F.binary_cross_entropy_with_logits(real_tex, torch.ones_like(real_tex))
    fake_loss = F.binary_cross_entropy_with_logits(fake_tex, torch.zeros_like(fake_tex))
    return real_loss + fake_loss


class GeneratorLoss(nn.Module):
    def __init__(self, w_col=1.0, w_tex=0.005):
        super().__init__()
        self.color_filter = FilterLow()
        self.w_col = w_col
        self.w_tex = w_tex

    def forward(self, tex_labels, out_images, target_images):
        self.last_tex_loss = F.binary_cross_entropy_with_logits(tex_labels, torch.ones_like(tex_labels))
        self.last_col_loss = F.l1_loss(self.color_filter(out_images), self.color_filter(target_images))
        return self.w_col * self.last_col_loss + self.w_tex * self.last_tex_loss


model_g = Generator()
model_d = Discriminator()
g_loss_module = GeneratorLoss()
optimizer_g = optim.Adam(model_g.parameters(), lr=0.0002, betas=[0.5, 0.999])
optimizer_d = optim.Adam(model_d.parameters(), lr=0.0002, betas=[0.5, 0.999])

train_loader = [(torch.rand(2, 3, 12, 12), torch.rand(2, 3, 12, 12)) for _ in range(2)]
iteration = 1
for input_img, disc_img in train_loader:
    iteration += 1
    # Estimate scores of fake and real images
    fake_img = model_g(input_img)
    real_tex = model_d(disc_img)
    fake_tex = model_d(fake_img)

    # Update Discriminator network
    model_d.zero_grad()
    d_tex_loss = discriminator_loss(real_tex, fake_tex)
    d_tex_loss.backward(retain_graph=True)
    optimizer_d.step()  # <-- IPL001: updates D weights saved by the fake_tex graph that g_loss backpropagates through

    # Update Generator network
    model_g.zero_grad()
    g_loss = g_loss_module(fake_tex, fake_img, input_img)
    g_loss.backward()
    optimizer_g.step()
