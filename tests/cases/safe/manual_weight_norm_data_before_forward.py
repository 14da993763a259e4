# label: safe
# why: the hand-rolled weight normalisation writes through .data only before any forward pass, so no graph has saved the weights yet and their gradients are exact.
import torch
import torch.nn.functional as F

torch.manual_seed(0)

W1 = torch.randn(8, 4, requires_grad=True)
W2 = torch.randn(2, 8, requires_grad=True)
x = torch.randn(5, 4)
target = torch.randn(5, 2)

# renormalise every row to unit norm before training starts
W1.data.div_(W1.data.norm(dim=1, keepdim=True))
W2.data.div_(W2.data.norm(dim=1, keepdim=True))

h = torch.tanh(F.linear(x, W1))
out = F.linear(h, W2)
loss = F.mse_loss(out, target)
loss.backward()
g1 = W1.grad
g2 = W2.grad
