# label: safe
# why: the fix trains G first on its own forward and then trains D on G_paintings.detach(), so neither optimizer step changes weights that a pending backward still needs.
# source: https://github.com/MorvanZhou/PyTorch-Tutorial/pull/91 (commit f52e199a4f9e73b466d5380fd113273c613d47ca, fix from https://github.com/pytorch/pytorch/issues/39141)
import torch
import torch.nn as nn

torch.manual_seed(1)

# Hyper Parameters
BATCH_SIZE = 8
LR_G = 0.0001           # learning rate for generator
LR_D = 0.0001           # learning rate for discriminator
N_IDEAS = 5             # think of this as number of ideas for generating an art work (Generator)
ART_COMPONENTS = 15     # it could be total point G can draw in the canvas
PAINT_POINTS = torch.linspace(-1, 1, ART_COMPONENTS).repeat(BATCH_SIZE, 1)


def artist_works():     # painting from the famous artist (real target)
    a = torch.empty(BATCH_SIZE, 1).uniform_(1, 2)
    paintings = a * torch.pow(PAINT_POINTS, 2) + (a - 1)
    return paintings


G = nn.Sequential(                      # Generator
    nn.Linear(N_IDEAS, 32),             # random ideas (could from normal distribution)
    nn.ReLU(),
    nn.Linear(32, ART_COMPONENTS),      # making a painting from these random ideas
)

D = nn.Sequential(                      # Discriminator
    nn.Linear(ART_COMPONENTS, 32),      # receive art work either from the famous artist or a newbie like G
    nn.ReLU(),
    nn.Linear(32, 1),
    nn.Sigmoid(),                       # tell the probability that the art work is made by artist
)

opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)
opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)

for step in range(2):
    artist_paintings = artist_works()  # real painting from artist
    G_ideas = torch.randn(BATCH_SIZE, N_IDEAS, requires_grad=True)  # random ideas
    G_paintings = G(G_ideas)                    # fake painting from G (random ideas)
    prob_artist1 = D(G_paintings)               # D try to reduce this prob
    G_loss = torch.mean(torch.log(1. - prob_artist1))
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()

    prob_artist0 = D(artist_paintings)          # D try to increase this prob
    prob_artist1 = D(G_paintings.detach())  # D try to reduce this prob
    D_loss = - torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)      # reusing computational graph
    opt_D.step()
