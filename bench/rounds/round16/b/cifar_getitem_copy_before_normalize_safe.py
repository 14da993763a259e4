# label: safe
# why: __getitem__ copies the stored image before _prepare_im normalizes it channel by channel in place, so the in-memory dataset keeps its raw pixels and every epoch sees identically normalized images
# source: https://github.com/facebookresearch/pycls/pull/21 (fixed Cifar10.__getitem__: self._inputs[index, ...].copy() before _prepare_im); original arrays are NumPy, ported to torch tensors
import torch
import torch.utils.data

torch.manual_seed(0)

# Per-channel mean and standard deviation values on CIFAR
_MEAN = [125.3, 123.0, 113.9]
_STD = [63.0, 62.1, 66.7]


class Cifar10(torch.utils.data.Dataset):
    """CIFAR-10 dataset held in memory."""

    def __init__(self, raw_batches, labels, split, im_size=4):
        self._im_size = im_size
        self._split = split
        self._inputs, self._labels = self._load_data(raw_batches, labels)

    def _load_data(self, raw_batches, labels):
        inputs = torch.cat(raw_batches).to(torch.float32)
        inputs = inputs.reshape((-1, 3, self._im_size, self._im_size))
        return inputs, labels

    def _prepare_im(self, im):
        """Prepares the image for network input."""
        for i in range(3):
            # Perform per-channel normalization on CHW image
            im[i] = (im[i] - _MEAN[i]) / _STD[i]
        return im

    def __getitem__(self, index):
        im, label = self._inputs[index, ...].clone(), self._labels[index]
        im = self._prepare_im(im)
        return im, label

    def __len__(self):
        return self._inputs.shape[0]


raw = [torch.randint(0, 256, (3, 3 * 4 * 4)), torch.randint(0, 256, (3, 3 * 4 * 4))]
labels = [0, 1, 2, 3, 4, 5]
dataset = Cifar10(raw, labels, split="test")
loader = torch.utils.data.DataLoader(dataset, batch_size=3, shuffle=False, num_workers=0)

epoch_means = []
for epoch in range(2):
    batch_means = []
    for images, targets in loader:
        batch_means.append(images.mean(dim=(0, 2, 3)))
    epoch_means.append(torch.stack(batch_means).mean(dim=0))
epoch_means = torch.stack(epoch_means)
first_image_stored = dataset._inputs[0].clone()
