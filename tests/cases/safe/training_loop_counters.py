# label: safe
# why: `i += 1`, `total += loss.item()`, `history += [...]`, `correct += ...` are Python-number/list updates, not tensor writes
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data = torch.randn(12, 4)
targets = torch.randint(0, 3, (12,))

i = 0
total = 0.0
correct = 0
history = []
for start in range(0, 12, 4):
    xb, yb = data[start:start + 4], targets[start:start + 4]
    logits = model(xb)
    loss = F.cross_entropy(logits, yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    i += 1
    total += loss.item()
    correct += (logits.argmax(1) == yb).sum().item()
    history += [loss.item()]
mean_loss = total / i
accuracy = correct / len(data)
