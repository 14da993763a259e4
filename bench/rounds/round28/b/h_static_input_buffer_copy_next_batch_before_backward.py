# label: hazard raises
# why: the loop copies the next batch into the static input/target buffers (copy_) while the current step's graph still holds them (x saved by x @ w, y saved by cross_entropy), so backward() finds them at a newer version and raises.
# source: https://github.com/pytorch/pytorch/issues/197887
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, d_in=6, d_hidden=12, n_classes=3):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d_in, d_hidden) * 0.1)
        self.head = nn.Linear(d_hidden, n_classes)

    def forward(self, x):
        return self.head(torch.tanh(x @ self.w))


class StaticBufferTrainer:
    """Keeps one pre-allocated input buffer (as for CUDA-graph capture) and
    prefetches the next batch into it to overlap data movement with compute."""

    def __init__(self, model, batches):
        self.model = model
        self.batches = batches
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.static_x = torch.empty_like(batches[0][0])
        self.static_y = torch.empty_like(batches[0][1])

    def train(self):
        losses = []
        self.static_x.copy_(self.batches[0][0])
        self.static_y.copy_(self.batches[0][1])
        for step in range(len(self.batches)):
            logits = self.model(self.static_x)
            loss = F.cross_entropy(logits, self.static_y)
            if step + 1 < len(self.batches):
                next_x, next_y = self.batches[step + 1]
                self.static_x.copy_(next_x)  # <-- IPL001
                self.static_y.copy_(next_y)  # <-- IPL001
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            losses.append(loss.detach())
        return torch.stack(losses)


def main():
    model = TinyLM()
    batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]
    trainer = StaticBufferTrainer(model, batches)
    losses = trainer.train()
    return losses, model.w.detach().clone()


losses, w = main()
