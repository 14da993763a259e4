# label: hazard silent
# why: best["weights"] stores the weight tensor itself, so later in-place gradient steps silently change the saved best weights.
import torch

torch.manual_seed(0)

features = torch.randn(40, 4)
true_w = torch.tensor([[1.5], [-0.5], [2.0], [0.0]])
labels = features @ true_w + 0.1 * torch.randn(40, 1)
train_x, val_x = features[:30], features[30:]
train_y, val_y = labels[:30], labels[30:]


def val_loss(w):
    return ((val_x @ w - val_y) ** 2).mean()


weights = torch.zeros(4, 1)
lr = 0.05
best = {}
best_val = float("inf")
for epoch in range(8):
    current = val_loss(weights).item()
    if current < best_val:
        best_val = current
        best["weights"] = weights
        best["epoch"] = epoch
    grad = 2.0 * train_x.t() @ (train_x @ weights - train_y) / len(train_x)
    weights.sub_(lr * grad)  # <-- IPL002: best["weights"] aliases weights

best_weights = best["weights"]
final_weights = weights
best_val_recomputed = val_loss(best_weights)
