# label: hazard raises no-twin
# why: the minimax loop calls optimizer.step() after loss1.backward(retain_graph=True), updating in place the weights that the retained graph saved, so loss2.backward() through the same graph fails the version check.
# source: https://github.com/thuml/Anomaly-Transformer/issues/1
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def my_kl_loss(p, q):
    res = p * (torch.log(p + 0.0001) - torch.log(q + 0.0001))
    return torch.mean(torch.sum(res, dim=-1), dim=1)


class AnomalyAttention(nn.Module):
    def __init__(self, win_size, d_model):
        super().__init__()
        self.win_size = win_size
        self.query_projection = nn.Linear(d_model, d_model)
        self.key_projection = nn.Linear(d_model, d_model)
        self.value_projection = nn.Linear(d_model, d_model)
        self.sigma_projection = nn.Linear(d_model, 1)
        idx = torch.arange(win_size, dtype=torch.float32)
        self.register_buffer("distances", (idx[:, None] - idx[None, :]).abs())

    def forward(self, x):
        B, L, D = x.shape
        queries = self.query_projection(x)
        keys = self.key_projection(x)
        values = self.value_projection(x)
        scores = torch.einsum("bld,bsd->bls", queries, keys) / math.sqrt(D)
        series = torch.softmax(scores, dim=-1)
        sigma = self.sigma_projection(x).squeeze(-1)  # B L
        sigma = torch.sigmoid(sigma * 5) + 1e-5
        sigma = torch.pow(3, sigma) - 1
        sigma = sigma.unsqueeze(-1).repeat(1, 1, self.win_size)  # B L L
        prior = 1.0 / (math.sqrt(2 * math.pi) * sigma) * torch.exp(-self.distances ** 2 / 2 / (sigma ** 2))
        out = torch.einsum("bls,bsd->bld", series, values)
        return out, series, prior, sigma


class AnomalyTransformer(nn.Module):
    def __init__(self, win_size, enc_in, d_model=8, e_layers=2):
        super().__init__()
        self.embedding = nn.Linear(enc_in, d_model)
        self.attn_layers = nn.ModuleList([AnomalyAttention(win_size, d_model) for _ in range(e_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.projection = nn.Linear(d_model, enc_in)

    def forward(self, x):
        enc_out = self.embedding(x)
        series_list, prior_list, sigma_list = [], [], []
        for attn_layer in self.attn_layers:
            new_x, series, prior, sigma = attn_layer(enc_out)
            enc_out = self.norm(enc_out + new_x)
            series_list.append(series)
            prior_list.append(prior)
            sigma_list.append(sigma)
        return self.projection(enc_out), series_list, prior_list, sigma_list


class Solver:
    def __init__(self):
        self.win_size = 6
        self.k = 3
        self.model = AnomalyTransformer(win_size=self.win_size, enc_in=4)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.criterion = nn.MSELoss()

    def train_step(self, input):
        self.optimizer.zero_grad()
        output, series, prior, _ = self.model(input)

        series_loss = 0.0
        prior_loss = 0.0
        for u in range(len(prior)):
            norm_prior = prior[u] / torch.unsqueeze(torch.sum(prior[u], dim=-1), dim=-1).repeat(1, 1, self.win_size)
            series_loss += (torch.mean(my_kl_loss(series[u], norm_prior.detach()))
                            + torch.mean(my_kl_loss(norm_prior.detach(), series[u])))
            prior_loss += (torch.mean(my_kl_loss(norm_prior, series[u].detach()))
                           + torch.mean(my_kl_loss(series[u].detach(), norm_prior)))
        series_loss = series_loss / len(prior)
        prior_loss = prior_loss / len(prior)

        rec_loss = self.criterion(output, input)
        loss1 = rec_loss - self.k * series_loss
        loss2 = rec_loss + self.k * prior_loss

        # Minimax strategy
        loss1.backward(retain_graph=True)
        self.optimizer.step()  # <-- IPL001: updates weights saved by the retained graph before loss2.backward()
        loss2.backward()
        self.optimizer.step()
        return loss1.detach(), loss2.detach()


solver = Solver()
batch = torch.randn(2, 6, 4)
loss1, loss2 = solver.train_step(batch)
