# label: hazard silent no-twin
# why: the trainer keeps best_model = model.state_dict(), whose tensors are the live parameters, so every later optimizer.step() overwrites the "best" weights and the final reload restores the last epoch instead
# source: https://github.com/thunlp/OpenKE/pull/131
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TransE(nn.Module):
    def __init__(self, ent_tot, rel_tot, dim=8, p_norm=1, norm_flag=True, margin=2.0):
        super().__init__()
        self.ent_embeddings = nn.Embedding(ent_tot, dim)
        self.rel_embeddings = nn.Embedding(rel_tot, dim)
        nn.init.xavier_uniform_(self.ent_embeddings.weight)
        nn.init.xavier_uniform_(self.rel_embeddings.weight)
        self.p_norm, self.norm_flag, self.margin = p_norm, norm_flag, margin

    def _calc(self, h, t, r):
        if self.norm_flag:
            h = F.normalize(h, 2, -1)
            r = F.normalize(r, 2, -1)
            t = F.normalize(t, 2, -1)
        score = h + (r - t)
        return torch.norm(score, self.p_norm, -1).flatten()

    def forward(self, batch_h, batch_t, batch_r):
        h = self.ent_embeddings(batch_h)
        t = self.ent_embeddings(batch_t)
        r = self.rel_embeddings(batch_r)
        return self._calc(h, t, r)


class Trainer:
    def __init__(self, model, triples, valid_triples, train_times=6, valid_steps=2, alpha=0.5):
        self.trainModel = model
        self.triples, self.valid_triples = triples, valid_triples
        self.train_times, self.valid_steps = train_times, valid_steps
        self.optimizer = torch.optim.SGD(model.parameters(), lr=alpha)

    def train_one_step(self, pos, neg):
        self.optimizer.zero_grad()
        p_score = self.trainModel(*pos.t())
        n_score = self.trainModel(*neg.t())
        loss = F.relu(p_score - n_score + self.trainModel.margin).mean()
        loss.backward()
        self.optimizer.step()  # <-- IPL002: updates the parameters in place while best_model still refers to them
        return loss.item()

    def valid(self):
        with torch.no_grad():
            h, t, r = self.valid_triples.t()
            return -self.trainModel(h, t, r).mean().item()

    def run(self):
        best_score, best_epoch, best_model = -float("inf"), 0, None
        for epoch in range(self.train_times):
            neg = self.triples.clone()
            neg[:, 1] = torch.randint(0, 10, (neg.size(0),))
            self.train_one_step(self.triples, neg)
            if (epoch + 1) % self.valid_steps == 0:
                score = self.valid()
                if score > best_score:
                    best_score, best_epoch = score, epoch
                    best_model = self.trainModel.state_dict()
        self.trainModel.load_state_dict(best_model)
        return best_score, best_epoch


triples = torch.randint(0, 10, (16, 3))
triples[:, 2] = triples[:, 2] % 3
valid_triples = torch.randint(0, 10, (6, 3))
valid_triples[:, 2] = valid_triples[:, 2] % 3
model = TransE(10, 3)
best_score, best_epoch = Trainer(model, triples, valid_triples).run()
restored_valid_score = torch.tensor(-model(*valid_triples.t()).mean().item())
