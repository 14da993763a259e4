# label: hazard silent
# why: Fast_CrossEntropyLoss.backward stores the gradient into the saved logits tensor and returns it, so after loss.backward() the caller's logits hold gradients and the accuracy logged from them afterwards is garbage
# source: https://github.com/unslothai/unsloth/issues/5002 (unsloth/kernels/cross_entropy_loss.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


def _cross_entropy_forward(logits, losses, logsumexp, labels):
    # stand-in for the _cross_entropy_forward Triton kernel
    c = logits.max(dim=-1, keepdim=True).values
    lse = c.squeeze(-1) + torch.log(torch.exp(logits - c).sum(dim=-1))
    valid = labels != -100
    x_label = logits.gather(1, labels.clamp(min=0).unsqueeze(1)).squeeze(1)
    losses.copy_(torch.where(valid, lse - x_label, torch.zeros_like(lse)))
    logsumexp.copy_(lse)


class Fast_CrossEntropyLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, labels, logit_softcapping=0, logit_scaling=0):
        n_rows, vocab_size = logits.shape
        losses = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
        logsumexp = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
        _cross_entropy_forward(logits, losses, logsumexp, labels)
        ctx.save_for_backward(logits, logsumexp, labels)
        return losses

    @staticmethod
    def backward(ctx, dlosses):
        logits, logsumexp, labels = ctx.saved_tensors
        n_rows, vocab_size = logits.shape
        # _cross_entropy_backward: dC/dx = softmax(x) - 1[label], computed row by row
        y = torch.exp(logits - logsumexp.unsqueeze(1))
        rows = torch.arange(n_rows)
        y[rows, labels.clamp(min=0)] -= 1.0
        dloss = torch.where(labels != -100, dlosses, torch.zeros_like(dlosses))
        logits.copy_(dloss.unsqueeze(1) * y)  # <-- IPL005: tl.store(logits_ptr, dloss * y) overwrites the saved logits
        return logits, None, None, None,


def fast_cross_entropy_loss(logits, labels, logit_softcapping=0, logit_scaling=0, n_items=None):
    batch, seq_len, d = logits.shape
    assert labels.shape == (batch, seq_len)
    loss = Fast_CrossEntropyLoss.apply(logits.view(batch * seq_len, d), labels.view(-1), logit_softcapping, logit_scaling)
    if n_items is None:
        n_items = torch.count_nonzero(labels != -100)
    return loss.sum() / n_items


class TinyLM(nn.Module):
    def __init__(self, vocab_size=11, hidden=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU())
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, input_ids):
        h = self.mlp(self.embed_tokens(input_ids))
        return self.lm_head(h)


model = TinyLM()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
input_ids = torch.randint(0, 11, (2, 5))
labels = torch.randint(0, 11, (2, 5))
labels[0, 0] = -100

logits = model(input_ids)
loss = fast_cross_entropy_loss(logits, labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()

# training-loop logging done after the step, reusing the logits of this batch
with torch.no_grad():
    mask = labels != -100
    preds = logits.argmax(dim=-1)
    train_accuracy = (preds[mask] == labels[mask]).float().mean()
    max_logit = logits.max()
