# label: hazard raises no-twin
# why: optim_G.step() updates the bias generator in place, then the discriminator loss backpropagates through vae_preds, whose graph still runs through the generator's old weights
# source: https://github.com/chojw/genb/issues/6
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BaseModel(nn.Module):
    def __init__(self, v_dim=8, q_dim=6, n_ans=5):
        super().__init__()
        self.v_proj = nn.Linear(v_dim, 16)
        self.q_proj = nn.Linear(q_dim, 16)
        self.classifier = nn.Linear(16, n_ans)

    def forward(self, v, q):
        joint = torch.relu(self.v_proj(v)) * torch.relu(self.q_proj(q))
        return self.classifier(joint)


class GenB(nn.Module):
    def __init__(self, v_dim=8, q_dim=6, n_ans=5):
        super().__init__()
        self.q_proj = nn.Linear(q_dim, 16)
        self.v_proj = nn.Linear(v_dim, 16)
        self.classifier = nn.Linear(16, n_ans)

    def forward(self, v, q, gen=True):
        h = torch.relu(self.q_proj(q))
        if gen:
            h = h + 0.1 * torch.randn_like(h)
        h = h * torch.sigmoid(self.v_proj(v))
        return self.classifier(h)


class Discriminator(nn.Module):
    def __init__(self, n_ans=5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_ans, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, a):
        return self.net(a)


model = BaseModel()
genb = GenB()
discriminator = Discriminator()
optim = torch.optim.Adamax(model.parameters(), lr=1e-3)
optim_G = torch.optim.Adamax(genb.parameters(), lr=1e-3)
optim_D = torch.optim.Adamax(discriminator.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
kld = nn.KLDivLoss(reduction="batchmean")

v = torch.randn(4, 8)
q = torch.randn(4, 6)
a = torch.rand(4, 5)
ones = torch.ones(4, 1)
zeros = torch.zeros(4, 1)

for step in range(2):
    optim.zero_grad()
    pred = model(v, q)

    # train genb
    optim_G.zero_grad()
    pred_g = genb(v, q, gen=True)
    g_loss = F.binary_cross_entropy_with_logits(pred_g, a, reduction="none").mean() * a.size(1)
    vae_preds = discriminator(torch.sigmoid(pred_g))
    main_preds = discriminator(a)
    g_distill = kld(F.log_softmax(pred_g, dim=1), F.softmax(pred.detach(), dim=1))
    dsc_loss = bce(vae_preds, ones)
    g_loss = g_loss + dsc_loss + g_distill * 5
    g_loss.backward(retain_graph=True)
    optim_G.step()  # <-- IPL001: updates genb weights that vae_preds' retained graph still needs for the discriminator backward below

    # train the discriminator
    optim_D.zero_grad()
    dsc_loss = bce(vae_preds, zeros) + bce(main_preds, ones)
    dsc_loss.backward(retain_graph=True)
    optim_D.step()

    # train the base model against the bias
    pred_g = genb(v, q, gen=False)
    loss = F.binary_cross_entropy_with_logits(pred - pred_g.detach(), a)
    loss.backward()
    optim.step()

final_pred = model(v, q)
