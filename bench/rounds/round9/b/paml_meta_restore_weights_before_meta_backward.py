# label: hazard raises no-twin
# why: after each persona's fast adaptation the validation loss is kept for the meta update, then load_state_dict copies the original weights back into the same parameter tensors in place, so the final batch_loss.backward() finds the weights its graphs saved at a newer version.
# source: https://github.com/HLTCHKUST/PAML/issues/18
import math
from copy import deepcopy

import torch
import torch.nn as nn

torch.manual_seed(0)


class Seq2Seq(nn.Module):
    def __init__(self, vocab=12, hidden=8, lr=0.1):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.encoder = nn.Linear(hidden, hidden)
        self.generator = nn.Linear(hidden, vocab)
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.parameters(), lr=lr)

    def forward(self, enc_batch):
        h = torch.tanh(self.encoder(self.embedding(enc_batch)))
        return self.generator(h)

    def train_one_batch(self, batch, iter, train=True):
        enc_batch, dec_batch = batch
        if train:
            self.optimizer.zero_grad()
        logits = self.forward(enc_batch)
        loss = self.criterion(logits.view(-1, logits.size(-1)), dec_batch.view(-1))
        if train:
            loss.backward()
            self.optimizer.step()
        return loss, math.exp(min(loss.item(), 100))


def do_learning_fix_step(model, train_batch, val_batch, iterations=2):
    for i in range(iterations):
        model.train_one_batch(train_batch, i, train=True)
    val_loss, val_ppl = model.train_one_batch(val_batch, 0, train=False)
    return val_loss, val_ppl


meta_net = Seq2Seq()
meta_optimizer = torch.optim.Adam(meta_net.parameters(), lr=1e-3)
personas = [
    ((torch.randint(0, 12, (2, 5)), torch.randint(0, 12, (2, 5))), (torch.randint(0, 12, (2, 5)), torch.randint(0, 12, (2, 5))))
    for _ in range(3)
]

val_loss_meta = []
weights_original = deepcopy(meta_net.state_dict())
for train_batch, val_batch in personas:
    val_loss, val_ppl = do_learning_fix_step(meta_net, train_batch, val_batch)
    val_loss_meta.append(val_loss)
    # Reset
    meta_net.load_state_dict({name: weights_original[name] for name in weights_original})  # <-- IPL001: copies into the parameters saved by the kept validation graphs

meta_optimizer.zero_grad()
batch_loss = torch.sum(torch.stack(val_loss_meta)) / len(val_loss_meta)
batch_loss.backward()
meta_optimizer.step()
