# label: hazard silent
# why: the in-RAM dataset hands out tensors that alias its storage and Normalize works in place, so every epoch normalizes the stored images again and the training data silently drifts.
# source: https://stackoverflow.com/questions/53652015/unexpected-increase-in-validation-error-in-mnist-pytorch
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        for t, m, s in zip(tensor, self.mean, self.std):
            t.sub_(m).div_(s)  # <-- IPL004: normalizes the dataset's own storage in place
        return tensor


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class InMemoryMNIST(torch.utils.data.Dataset):
    def __init__(self, data, targets, transform=None):
        self.data = data
        self.targets = targets
        self.transform = transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        img = img.unsqueeze(0)  # like ToTensor on an array view: shares memory with self.data
        if self.transform is not None:
            img = self.transform(img)
        return img, target


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3)
        self.fc1 = nn.Linear(4 * 3 * 3, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = x.view(x.size(0), -1)
        return F.log_softmax(self.fc1(x), dim=1)


train_images = torch.rand(8, 8, 8)
train_labels = torch.randint(0, 10, (8,))
train_set = InMemoryMNIST(train_images, train_labels, transform=Compose([Normalize((0.1307,), (0.3081,))]))
loader = torch.utils.data.DataLoader(train_set, batch_size=4, shuffle=False)

model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
epoch_losses = []
for epoch in range(3):
    total = 0.0
    for data, target in loader:
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        total = total + loss.detach()
    epoch_losses.append(total)
epoch_losses = torch.stack(epoch_losses)
