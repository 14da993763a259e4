# label: safe
# why: the in-place calibration ops on softmax outputs run under torch.inference_mode(), where no graph is recorded
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 5))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

x = torch.randn(8, 10)
y = torch.randint(0, 5, (8,))
loss = F.cross_entropy(model(x), y)
optimizer.zero_grad()
loss.backward()
optimizer.step()
train_grad = model[0].weight.grad.clone()

model.eval()
temperature = 1.5
with torch.inference_mode():
    logits = model(torch.randn(4, 10))
    logits /= temperature
    probs = logits.softmax(dim=-1)
    probs.clamp_(min=1e-3)
    probs.div_(probs.sum(dim=-1, keepdim=True))
    confidence, preds = probs.max(dim=-1)
    preds += 1
