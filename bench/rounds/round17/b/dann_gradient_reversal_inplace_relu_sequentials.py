# label: safe
# why: the gradient-reversal Function returns a view and only negates grad_output out of place, the in-place ReLUs follow MaxPool/BatchNorm outputs that no backward needs, and the input buffers are filled in place before any graph exists.
# source: https://github.com/fungtion/DANN/blob/476147f70bb818a63bb3461a6ecc12f97f7ab15e/models/model.py
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Function

torch.manual_seed(0)


class ReverseLayerF(Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        output = grad_output.neg() * ctx.alpha
        return output, None


class CNNModel(nn.Module):
    def __init__(self):
        super(CNNModel, self).__init__()
        self.feature = nn.Sequential()
        self.feature.add_module('f_conv1', nn.Conv2d(3, 8, kernel_size=5))
        self.feature.add_module('f_bn1', nn.BatchNorm2d(8))
        self.feature.add_module('f_pool1', nn.MaxPool2d(2))
        self.feature.add_module('f_relu1', nn.ReLU(True))
        self.feature.add_module('f_conv2', nn.Conv2d(8, 10, kernel_size=5))
        self.feature.add_module('f_bn2', nn.BatchNorm2d(10))
        self.feature.add_module('f_drop1', nn.Dropout2d())
        self.feature.add_module('f_pool2', nn.MaxPool2d(2))
        self.feature.add_module('f_relu2', nn.ReLU(True))

        self.class_classifier = nn.Sequential()
        self.class_classifier.add_module('c_fc1', nn.Linear(10 * 4 * 4, 20))
        self.class_classifier.add_module('c_bn1', nn.BatchNorm1d(20))
        self.class_classifier.add_module('c_relu1', nn.ReLU(True))
        self.class_classifier.add_module('c_drop1', nn.Dropout())
        self.class_classifier.add_module('c_fc2', nn.Linear(20, 20))
        self.class_classifier.add_module('c_bn2', nn.BatchNorm1d(20))
        self.class_classifier.add_module('c_relu2', nn.ReLU(True))
        self.class_classifier.add_module('c_fc3', nn.Linear(20, 10))
        self.class_classifier.add_module('c_softmax', nn.LogSoftmax(dim=1))

        self.domain_classifier = nn.Sequential()
        self.domain_classifier.add_module('d_fc1', nn.Linear(10 * 4 * 4, 20))
        self.domain_classifier.add_module('d_bn1', nn.BatchNorm1d(20))
        self.domain_classifier.add_module('d_relu1', nn.ReLU(True))
        self.domain_classifier.add_module('d_fc2', nn.Linear(20, 2))
        self.domain_classifier.add_module('d_softmax', nn.LogSoftmax(dim=1))

    def forward(self, input_data, alpha):
        input_data = input_data.expand(input_data.data.shape[0], 3, 28, 28)
        feature = self.feature(input_data)
        feature = feature.view(-1, 10 * 4 * 4)
        reverse_feature = ReverseLayerF.apply(feature, alpha)
        class_output = self.class_classifier(feature)
        domain_output = self.domain_classifier(reverse_feature)
        return class_output, domain_output


my_net = CNNModel()
optimizer = torch.optim.Adam(my_net.parameters(), lr=1e-3)
loss_class = nn.NLLLoss()
loss_domain = nn.NLLLoss()
image_size, n_epoch, len_dataloader, epoch, i = 28, 1, 1, 0, 0
p = float(i + epoch * len_dataloader) / n_epoch / len_dataloader
alpha = 2. / (1. + np.exp(-10 * p)) - 1

s_img, s_label = torch.rand(4, 1, 28, 28), torch.randint(0, 10, (4,))
t_img = torch.rand(4, 1, 28, 28)
my_net.zero_grad()
batch_size = len(s_label)
input_img = torch.FloatTensor(batch_size, 1, image_size, image_size)
class_label = torch.LongTensor(batch_size)
domain_label = torch.zeros(batch_size).long()
input_img.resize_as_(s_img).copy_(s_img)
class_label.resize_as_(s_label).copy_(s_label)
class_output, domain_output = my_net(input_data=input_img, alpha=alpha)
err_s_label = loss_class(class_output, class_label)
err_s_domain = loss_domain(domain_output, domain_label)

batch_size = len(t_img)
input_img = torch.FloatTensor(batch_size, 1, image_size, image_size)
domain_label = torch.ones(batch_size).long()
input_img.resize_as_(t_img).copy_(t_img)
_, domain_output = my_net(input_data=input_img, alpha=alpha)
err_t_domain = loss_domain(domain_output, domain_label)
err = err_t_domain + err_s_domain + err_s_label
err.backward()
