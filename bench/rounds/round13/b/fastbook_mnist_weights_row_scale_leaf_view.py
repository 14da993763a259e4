# label: hazard raises
# why: scaling one row of the trainable weights in place outside no_grad writes to a view of a leaf that requires grad, which autograd rejects
# source: https://github.com/fastai/fastbook/pull/471
import torch

torch.manual_seed(0)


def init_params(size, std=1.0):
    return (torch.randn(size) * std).requires_grad_()


def linear1(xb):
    return xb @ weights + bias


def mnist_loss(predictions, targets):
    predictions = predictions.sigmoid()
    return torch.where(targets == 1, 1 - predictions, predictions).mean()


weights = init_params((28 * 28, 1))
bias = init_params(1)
train_x = torch.rand(6, 28 * 28)
train_y = torch.tensor([1, 0, 1, 1, 0, 0]).unsqueeze(1)

preds = linear1(train_x)
corrects = (preds > 0.0).float() == train_y
# see how the accuracy responds to a tiny change in one weight
weights[0] *= 1.0001  # <-- IPL003: in-place write to a view of a leaf that requires grad
preds = linear1(train_x)
loss = mnist_loss(preds, train_y)
loss.backward()
