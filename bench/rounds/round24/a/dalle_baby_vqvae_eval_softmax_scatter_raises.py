# label: hazard raises
# why: after the test pass the trainer leaves the VQVAE in eval mode, so the next training step takes the eval branch where `softmax.scatter_(...)` overwrites the F.softmax output that SoftmaxBackward saved, and loss.backward() fails ("Error detected in SoftmaxBackward").
# source: https://github.com/yashbonde/dall-e-baby/issues/1 (discrete_vae.py VQVAE_v3.forward / DiscreteVAETrainer.train at commit a8d505a; scatter_ replaced by F.one_hot in b6f283fc7fc1e5d69473355d6bdb1c0657064cb0)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import einsum

torch.manual_seed(0)


class ResidualLayer(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ResidualLayer, self).__init__()
        self.resblock = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.LeakyReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, kernel_size=1, bias=False),
            nn.BatchNorm2d(out_channels),
        )

    def forward(self, input):
        return input + self.resblock(input)


class QuickGELU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class VQVAE_v3(nn.Module):
    def __init__(self, in_channels=3, embedding_dim=8, num_embeddings=16, h_dim=8):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Sequential(nn.Conv2d(in_channels, h_dim, 4, 2, 1), nn.BatchNorm2d(h_dim), QuickGELU()),
            ResidualLayer(h_dim, h_dim), QuickGELU(),
            nn.Conv2d(h_dim, num_embeddings, kernel_size=1, stride=1),
        )
        self.codebook = nn.Embedding(num_embeddings, embedding_dim)
        self.decoder = nn.Sequential(
            nn.Sequential(nn.ConvTranspose2d(embedding_dim, h_dim, 3, 1, 1), nn.BatchNorm2d(h_dim), QuickGELU()),
            ResidualLayer(h_dim, h_dim), QuickGELU(),
            nn.Sequential(nn.ConvTranspose2d(h_dim, in_channels, 4, 2, 1), nn.Tanh()),
        )

    def forward(self, input, v=False):
        encoding = self.encoder(input)
        if self.training:
            softmax = F.gumbel_softmax(encoding, tau=1., hard=True, dim=1)
        else:
            # during testing we can ignore this added noise and go for standard softmax
            softmax = F.softmax(encoding, dim=1)
            softmax = softmax.scatter_(1, torch.argmax(softmax, dim=1).unsqueeze(1), 1)  # <-- IPL001
        encoding_ids = torch.argmax(softmax, dim=1).view(encoding.size(0), -1)
        quantized_inputs = einsum("bdhw,dn->bnhw", softmax, self.codebook.weight)
        recons = self.decoder(quantized_inputs)
        recons_loss = F.mse_loss(recons, input)
        loss = recons_loss
        return encoding_ids, loss, recons


class DiscreteVAETrainer:
    def __init__(self, model, train_dataset, test_dataset):
        self.model = model
        self.train_dataset = train_dataset
        self.test_dataset = test_dataset

    def train(self, n_epochs, lr, test_every=1, save_every=None):
        model = self.model
        optim = torch.optim.Adam(model.parameters(), lr=lr)
        gs = 0
        train_losses = [-1]
        model.train()
        for epoch in range(n_epochs):
            for d in self.train_dataset:
                _, loss, _ = model(d)
                loss = loss.mean()
                optim.zero_grad()
                loss.backward()
                optim.step()
                gs += 1
                train_losses.append(loss.item())

                # ----- test condition
                if self.test_dataset is not None and gs and gs % test_every == 0:
                    model = model.eval()  # convert model to testing mode
                    test_loss = []
                    for d in self.test_dataset:
                        with torch.no_grad():
                            _, loss, output_img = model(d)
                        test_loss.append(loss.item())

                if gs and save_every and gs % save_every == 0:
                    model = model.train()  # convert model back to training mode
        return torch.tensor(train_losses[1:])


def main():
    model = VQVAE_v3()
    train_dataset = [torch.rand(4, 3, 8, 8) * 2 - 1 for _ in range(3)]
    test_dataset = [torch.rand(4, 3, 8, 8) * 2 - 1]
    trainer = DiscreteVAETrainer(model, train_dataset, test_dataset)
    train_losses = trainer.train(n_epochs=1, lr=1e-3, test_every=1, save_every=None)
    return train_losses, model.codebook.weight.detach().clone()


train_losses, codebook = main()
