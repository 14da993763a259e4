# label: safe no-twin
# why: BigGAN's SN layers write the power-iteration vector u and the logged singular values sv into registered buffers by slice assignment, but both writes run under torch.no_grad() (the sv one was moved there by the fix) and the buffers are not tensors saved for the weight's backward, so gradients are unaffected.
# source: https://github.com/ajbrock/BigGAN-PyTorch/commit/ddc083271b4b70eb704031c9ae24f95a63e94b8c
import torch
import torch.nn as nn
import torch.nn.functional as F


# Projection of x onto y
def proj(x, y):
  return torch.mm(y, x.t()) * y / torch.mm(y, y.t())


# Orthogonalize x wrt list of vectors ys
def gram_schmidt(x, ys):
  for y in ys:
    x = x - proj(x, y)
  return x


# Apply num_itrs steps of the power method to estimate top N singular values.
def power_iteration(W, u_, update=True, eps=1e-12):
  us, vs, svs = [], [], []
  for i, u in enumerate(u_):
    with torch.no_grad():
      v = torch.matmul(u, W)
      v = F.normalize(gram_schmidt(v, vs), eps=eps)
      vs += [v]
      u = torch.matmul(v, W.t())
      u = F.normalize(gram_schmidt(u, us), eps=eps)
      us += [u]
      if update:
        u_[i][:] = u
    # Compute this singular value and add it to the list
    svs += [torch.squeeze(torch.matmul(torch.matmul(v, W.t()), u.t()))]
  return svs, us, vs


# Spectral normalization base class
class SN(object):
  def __init__(self, num_svs, num_itrs, num_outputs, transpose=False, eps=1e-12):
    self.num_itrs = num_itrs
    self.num_svs = num_svs
    self.transpose = transpose
    self.eps = eps
    for i in range(self.num_svs):
      self.register_buffer('u%d' % i, torch.randn(1, num_outputs))
      self.register_buffer('sv%d' % i, torch.ones(1))

  @property
  def u(self):
    return [getattr(self, 'u%d' % i) for i in range(self.num_svs)]

  # these buffers are just for logging and are not used in training.
  @property
  def sv(self):
    return [getattr(self, 'sv%d' % i) for i in range(self.num_svs)]

  def W_(self):
    W_mat = self.weight.view(self.weight.size(0), -1)
    if self.transpose:
      W_mat = W_mat.t()
    for _ in range(self.num_itrs):
      svs, us, vs = power_iteration(W_mat, self.u, update=self.training, eps=self.eps)
    # Update the svs
    if self.training:
      with torch.no_grad():  # Make sure to do this in a no_grad() context or you'll get memory leaks!
        for i, sv in enumerate(svs):
          self.sv[i][:] = sv
    return self.weight / svs[0]


class SNConv2d(nn.Conv2d, SN):
  def __init__(self, in_channels, out_channels, kernel_size, stride=1,
               padding=0, dilation=1, groups=1, bias=True,
               num_svs=1, num_itrs=1, eps=1e-12):
    nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, stride,
                       padding, dilation, groups, bias)
    SN.__init__(self, num_svs, num_itrs, out_channels, eps=eps)

  def forward(self, x):
    return F.conv2d(x, self.W_(), self.bias, self.stride,
                    self.padding, self.dilation, self.groups)


class SNLinear(nn.Linear, SN):
  def __init__(self, in_features, out_features, bias=True,
               num_svs=1, num_itrs=1, eps=1e-12):
    nn.Linear.__init__(self, in_features, out_features, bias)
    SN.__init__(self, num_svs, num_itrs, out_features, eps=eps)

  def forward(self, x):
    return F.linear(x, self.W_(), self.bias)


class Discriminator(nn.Module):
  def __init__(self, ch=8):
    super(Discriminator, self).__init__()
    self.conv1 = SNConv2d(3, ch, 3, padding=1, num_svs=2)
    self.conv2 = SNConv2d(ch, 2 * ch, 3, padding=1)
    self.linear = SNLinear(2 * ch, 1)

  def forward(self, x):
    h = F.relu(self.conv1(x))
    h = F.avg_pool2d(F.relu(self.conv2(h)), 2)
    h = torch.sum(h, [2, 3])
    return torch.squeeze(self.linear(h))


def main():
  torch.manual_seed(0)
  D = Discriminator()
  D.train()
  x = torch.randn(4, 3, 8, 8)
  out = D(x)
  D_loss_real = torch.mean(F.relu(1. - out))
  D_loss_real.backward()
  print('D_loss_real', float(D_loss_real.item()))
  print('grad conv1', D.conv1.weight.grad.abs().sum().item())
  print('sv0', D.conv1.sv0.item(), 'sv1', D.conv1.sv1.item())


main()
