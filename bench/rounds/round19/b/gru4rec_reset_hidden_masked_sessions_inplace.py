# label: safe
# why: reset_hidden zeroes finished sessions in the GRU state returned by the previous step, whose graph was already consumed by that step's backward, and the result is detached before reuse, so the in-place write equals an out-of-place reset
# source: https://github.com/yhs968/pyGRU4REC/issues/8 (code: https://github.com/yhs968/pyGRU4REC/blob/992b54b73540d49bf522d4c33337c9329633bd9e/modules/model.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class GRU4REC(nn.Module):
    def __init__(self, input_size=6, hidden_size=5, output_size=6, num_layers=1, batch_size=3):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.batch_size = batch_size
        self.onehot_buffer = torch.zeros(batch_size, input_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()
        self.gru = nn.GRU(input_size, hidden_size, num_layers)

    def onehot_encode(self, input):
        self.onehot_buffer.zero_()
        index = input.view(-1, 1)
        return self.onehot_buffer.scatter(1, index, 1)

    def forward(self, input, target, hidden):
        embedded = self.onehot_encode(input).unsqueeze(0)
        output, hidden = self.gru(embedded, hidden)
        output = output.view(-1, output.size(-1))
        logit = self.tanh(self.h2o(output))
        return logit, hidden

    def init_hidden(self):
        return torch.zeros(self.num_layers, self.batch_size, self.hidden_size)


def top1_loss(logit):
    diff = -(logit.diag().view(-1, 1).expand_as(logit) - logit)
    return torch.sigmoid(diff).mean() + torch.sigmoid(logit ** 2).mean()


def run_epoch(gru, optimizer, loader, training=True):
    losses = []
    hidden = gru.init_hidden()

    def reset_hidden(hidden, mask):
        if len(mask) != 0:
            hidden[:, mask, :] = 0
        return hidden

    for input, target, mask in loader:
        hidden = reset_hidden(hidden, mask).detach()
        logit, hidden = gru(input, target, hidden)
        logit_sampled = logit[:, target.view(-1)]
        loss = top1_loss(logit_sampled)
        losses.append(loss.item())
        if training:
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    return hidden


gru = GRU4REC()
optimizer = torch.optim.Adagrad(gru.parameters(), lr=0.05)
loader = [
    (torch.tensor([0, 1, 2]), torch.tensor([1, 2, 3]), []),
    (torch.tensor([1, 2, 3]), torch.tensor([2, 3, 4]), [1]),
    (torch.tensor([2, 4, 4]), torch.tensor([3, 5, 0]), [0, 2]),
    (torch.tensor([3, 5, 0]), torch.tensor([4, 0, 1]), []),
]
final_hidden = run_epoch(gru, optimizer, loader)
