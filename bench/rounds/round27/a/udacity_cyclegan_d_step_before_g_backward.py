# label: hazard raises no-twin
# why: the generator losses reuse discriminator outputs computed before d_x_optimizer.step()/d_y_optimizer.step(), so the optimizer's in-place update of the discriminator weights (saved by their convolutions) bumps their version before g_total_loss.backward().
# source: https://github.com/udacity/deep-learning-v2-pytorch/issues/300
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


def conv(in_channels, out_channels, kernel_size, stride=2, padding=1, batch_norm=True):
    layers = []
    conv_layer = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False)
    layers.append(conv_layer)
    if batch_norm:
        layers.append(nn.BatchNorm2d(out_channels))
    return nn.Sequential(*layers)


class Discriminator(nn.Module):
    def __init__(self, conv_dim=8):
        super(Discriminator, self).__init__()
        self.conv1 = conv(3, conv_dim, 4, batch_norm=False)
        self.conv2 = conv(conv_dim, conv_dim * 2, 4)
        self.conv5 = conv(conv_dim * 2, 1, 4, stride=1, batch_norm=False)

    def forward(self, x):
        out = torch.relu(self.conv1(x))
        out = torch.relu(self.conv2(out))
        out = self.conv5(out)
        return out


class CycleGenerator(nn.Module):
    def __init__(self, conv_dim=8):
        super(CycleGenerator, self).__init__()
        self.conv1 = conv(3, conv_dim, 3, stride=1)
        self.conv2 = conv(conv_dim, 3, 3, stride=1, batch_norm=False)

    def forward(self, x):
        out = torch.relu(self.conv1(x))
        out = torch.tanh(self.conv2(out))
        return out


def real_mse_loss(D_out):
    return torch.mean((D_out - 1) ** 2)


def fake_mse_loss(D_out):
    return torch.mean(D_out ** 2)


def cycle_consistency_loss(real_im, reconstructed_im, lambda_weight):
    reconstr_loss = torch.mean(torch.abs(real_im - reconstructed_im))
    return lambda_weight * reconstr_loss


def training_loop(images_X, images_Y, n_epochs=1):
    G_XtoY, G_YtoX = CycleGenerator(), CycleGenerator()
    D_X, D_Y = Discriminator(), Discriminator()
    g_params = list(G_XtoY.parameters()) + list(G_YtoX.parameters())
    g_optimizer = optim.Adam(g_params, 0.0002, [0.5, 0.999])
    d_x_optimizer = optim.Adam(D_X.parameters(), 0.0002, [0.5, 0.999])
    d_y_optimizer = optim.Adam(D_Y.parameters(), 0.0002, [0.5, 0.999])

    for epoch in range(1, n_epochs + 1):
        # ============================================
        #            TRAIN THE DISCRIMINATORS
        # ============================================
        d_x_optimizer.zero_grad()
        out_x = D_X(images_X)
        D_X_real_loss = real_mse_loss(out_x)
        fake_X = G_YtoX(images_Y)
        out_fake_x = D_X(fake_X)
        D_X_fake_loss = fake_mse_loss(out_fake_x)
        d_x_loss = D_X_real_loss + D_X_fake_loss
        d_x_loss.backward(retain_graph=True)
        d_x_optimizer.step()  # <-- IPL001

        d_y_optimizer.zero_grad()
        out_y = D_Y(images_Y)
        D_Y_real_loss = real_mse_loss(out_y)
        fake_Y = G_XtoY(images_X)
        out_fake_y = D_Y(fake_Y)
        D_Y_fake_loss = fake_mse_loss(out_fake_y)
        d_y_loss = D_Y_real_loss + D_Y_fake_loss
        d_y_loss.backward(retain_graph=True)
        d_y_optimizer.step()  # <-- IPL001

        # =========================================
        #            TRAIN THE GENERATORS
        # =========================================
        g_optimizer.zero_grad()
        g_YtoX_loss = real_mse_loss(out_fake_x)
        reconstructed_Y = G_XtoY(fake_X)
        reconstructed_y_loss = cycle_consistency_loss(images_Y, reconstructed_Y, lambda_weight=10)
        g_XtoY_loss = real_mse_loss(out_fake_y)
        reconstructed_X = G_YtoX(fake_Y)
        reconstructed_x_loss = cycle_consistency_loss(images_X, reconstructed_X, lambda_weight=10)
        g_total_loss = g_YtoX_loss + g_XtoY_loss + reconstructed_y_loss + reconstructed_x_loss
        g_total_loss.backward()
        g_optimizer.step()
    return d_x_loss.detach(), d_y_loss.detach(), g_total_loss.detach()


images_X = torch.rand(2, 3, 16, 16) * 2 - 1
images_Y = torch.rand(2, 3, 16, 16) * 2 - 1
losses = training_loop(images_X, images_Y)
