# label: hazard raises no-twin
# why: optimizer_G.step() updates the modality encoders in place right after g_loss.backward(retain_graph=True), and the classifier loss is then backpropagated through the same a_en/v_en/l_en graphs, which saved the old encoder weights.
# source: https://github.com/TmacMai/ARGF_multimodal_fusion/issues/2
import itertools

import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, in_size, hidden_size):
        super().__init__()
        self.linear_1 = nn.Linear(in_size, hidden_size * 5)
        self.linear_2 = nn.Linear(hidden_size * 5, hidden_size)
        self.linear_3 = nn.Linear(hidden_size, hidden_size)

    def forward(self, x):
        y_1 = torch.tanh(self.linear_1(x))
        y_2 = torch.tanh(self.linear_2(y_1))
        return torch.tanh(self.linear_3(y_2))


class Decoder(nn.Module):
    def __init__(self, hidden_size, out_size):
        super().__init__()
        self.linear = nn.Linear(hidden_size, out_size)

    def forward(self, x):
        return self.linear(x)


class Discriminator(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(hidden_size, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, z):
        return self.model(z)


def main():
    a_dim, v_dim, t_dim, hidden, output_dim = 5, 6, 7, 4, 1
    encoder_a, encoder_v, encoder_l = Encoder(a_dim, hidden), Encoder(v_dim, hidden), Encoder(t_dim, hidden)
    decoder_a, decoder_v, decoder_l = Decoder(hidden, a_dim), Decoder(hidden, v_dim), Decoder(hidden, t_dim)
    discriminator = Discriminator(hidden)
    classifier_3 = nn.Linear(hidden, output_dim)
    pixelwise_loss = nn.L1Loss()
    adversarial_loss = nn.BCELoss()
    criterion = nn.L1Loss()
    alpha = 0.5

    optimizer_G = torch.optim.Adam(
        itertools.chain(encoder_a.parameters(), encoder_v.parameters(), encoder_l.parameters(),
                        decoder_a.parameters(), decoder_l.parameters(), decoder_v.parameters()), lr=1e-3)
    optimizer_E = torch.optim.Adam(
        itertools.chain(encoder_a.parameters(), encoder_v.parameters(), encoder_l.parameters(),
                        classifier_3.parameters()), lr=1e-3)

    x_a, x_v, x_t = torch.randn(8, a_dim), torch.randn(8, v_dim), torch.randn(8, t_dim)
    y = torch.randn(8, output_dim)

    # encoder-decoder
    optimizer_G.zero_grad()
    a_en = encoder_a(x_a)
    v_en = encoder_v(x_v)
    l_en = encoder_l(x_t)
    a_de = decoder_a(a_en)
    v_de = decoder_v(v_en)
    l_de = decoder_l(l_en)

    rl1 = pixelwise_loss(a_de, x_a) + pixelwise_loss(v_de, x_v) + pixelwise_loss(l_de, x_t)
    valid = torch.ones(y.shape[0], 1)
    g_loss = alpha * (adversarial_loss(discriminator(l_en), valid) + adversarial_loss(discriminator(v_en), valid)) \
        + (1 - alpha) * rl1
    g_loss.backward(retain_graph=True)
    optimizer_G.step()  # <-- IPL001

    # classifier
    optimizer_E.zero_grad()
    a = classifier_3(a_en)
    v = classifier_3(v_en)
    l = classifier_3(l_en)
    c_loss = criterion(a, y) + criterion(l, y) + criterion(v, y)
    c_loss.backward(retain_graph=True)
    optimizer_E.step()
    return c_loss.detach()


result = main()
