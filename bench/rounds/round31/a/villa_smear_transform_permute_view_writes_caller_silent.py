# label: hazard silent
# why: SmearTransform._apply_to_image takes `chan_img = img[ch]` and (after an optional permute) `moved`, both views of the caller's volume, and writes the blended slices back with `moved[i] = ...`; the `img.clone()` only protects the returned copy, so every call also smears the cached training volume in place and the next epoch augments an already-smeared scan.
# source: https://github.com/ScrollPrize/villa/pull/1493
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ImageOnlyTransform:
    def __call__(self, **data_dict):
        params = self.get_parameters(**data_dict)
        data_dict["image"] = self._apply_to_image(data_dict["image"], **params)
        return data_dict


class SmearTransform(ImageOnlyTransform):
    def __init__(self, shift=(10, 0), alpha=0.5, num_prev_slices=1, smear_axis=1):
        super().__init__()
        self.shift = shift
        self.alpha = alpha
        self.num_prev_slices = num_prev_slices
        self.smear_axis = smear_axis
        self._skip_when_vector = True

    def get_parameters(self, **data_dict) -> dict:
        # No extra parameters are needed.
        return {}

    def _apply_to_image(self, img: torch.Tensor, **params) -> torch.Tensor:
        # Pure torch implementation; runs on CPU or GPU depending on img.device
        C = img.shape[0]
        spatial_shape = img.shape[1:]
        num_spatial_dims = len(spatial_shape)
        if not (1 <= self.smear_axis <= num_spatial_dims):
            raise ValueError(f"smear_axis must be between 1 and {num_spatial_dims} for input with shape {tuple(img.shape)}")

        local_smear_axis = self.smear_axis - 1
        transformed = img.clone()
        # Determine dims for moveaxis in torch
        for ch in range(C):
            chan_img = img[ch]
            if chan_img.shape[local_smear_axis] <= self.num_prev_slices:
                continue
            # Move the smear axis to front: build permutation
            dims = list(range(chan_img.ndim))
            if local_smear_axis != 0:
                dims = [local_smear_axis] + [d for d in dims if d != local_smear_axis]
                moved = chan_img.permute(*dims)
            else:
                moved = chan_img
            N = moved.shape[0]
            for i in range(self.num_prev_slices, N):
                aggregated = torch.zeros_like(moved[i], dtype=torch.float32, device=moved.device)
                count = 0
                for j in range(i - self.num_prev_slices, i):
                    slice_j = moved[j]
                    # Determine shift behavior based on dimensionality of slice
                    if slice_j.ndim == 0:
                        shifted = slice_j
                    elif slice_j.ndim == 1:
                        shifted = torch.roll(slice_j, shifts=self.shift[0], dims=0)
                    else:
                        # Shift along first two axes of the slice
                        s0 = self.shift[0] if len(self.shift) >= 1 else 0
                        s1 = self.shift[1] if len(self.shift) >= 2 else 0
                        shifted = torch.roll(slice_j, shifts=(s0, s1), dims=(0, 1))
                    aggregated += shifted.to(aggregated.dtype)
                    count += 1
                if count > 0:
                    aggregated = aggregated / float(count)
                moved[i] = ((1 - self.alpha) * moved[i].to(torch.float32) + self.alpha * aggregated).to(moved.dtype)  # <-- IPL004
            # Restore original axis order
            if local_smear_axis != 0:
                inv_perm = list(range(1, moved.ndim))
                inv_perm.insert(local_smear_axis, 0)
                transformed[ch] = moved.permute(*inv_perm)
            else:
                transformed[ch] = moved
        return transformed


class CachedVolumeDataset:
    """Scroll CT patches kept in memory; __getitem__ hands out the cached tensors."""

    def __init__(self, n=2, shape=(1, 8, 12, 12)):
        self.volumes = [torch.rand(shape) for _ in range(n)]
        self.labels = [(v > 0.5).float() for v in self.volumes]
        self.transform = SmearTransform(shift=(2, 0), alpha=0.5, num_prev_slices=2, smear_axis=2)

    def __getitem__(self, idx):
        data = self.transform(image=self.volumes[idx], segmentation=self.labels[idx])
        return data["image"], data["segmentation"]

    def __len__(self):
        return len(self.volumes)


class TinyUNet3D(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv3d(1, 4, 3, padding=1)
        self.dec = nn.Conv3d(4, 1, 3, padding=1)

    def forward(self, x):
        return self.dec(F.relu(self.enc(x)))


def main():
    dataset = CachedVolumeDataset()
    model = TinyUNet3D()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for epoch in range(2):
        images, labels = zip(*[dataset[i] for i in range(len(dataset))])
        logits = model(torch.stack(images))
        loss = F.binary_cross_entropy_with_logits(logits, torch.stack(labels))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses), torch.stack(dataset.volumes)


epoch_losses, cached_volumes = main()
