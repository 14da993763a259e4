# label: hazard raises
# why: with rtd_use_batch_interaction the replaced-token-detection step builds `fake_pos_emb = pos_emb.view(...)` and index-assigns the sampled interactions into it, overwriting `pos_emb`, the tanh output of the ProjectionNetwork that TanhBackward saved; the joint generator/discriminator loss cannot be backpropagated.
# source: https://github.com/NVIDIA-Merlin/Transformers4Rec/commit/8c0c8c5ac1ac540fef336036fcbf4c9565666047
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ProjectionNetwork(nn.Module):
    """
    Project item interaction embeddings into model's hidden size
    """

    def __init__(self, input_dim, output_dim, inp_merge, layer_norm_all_features, input_dropout, tf_out_act):
        super().__init__()
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.inp_merge = inp_merge
        self.layer_norm_all_features = layer_norm_all_features
        self.tf_out_act = tf_out_act
        self.input_dropout = nn.Dropout(input_dropout)
        if self.layer_norm_all_features:
            self.layer_norm_all_input = nn.LayerNorm(normalized_shape=self.input_dim)
        if self.inp_merge == "mlp":
            self.merge = nn.Linear(self.input_dim, output_dim)
        else:
            raise NotImplementedError

    def forward(self, inp):
        if self.inp_merge == "mlp" and self.layer_norm_all_features:
            return self.tf_out_act(self.merge(self.layer_norm_all_input(self.input_dropout(inp))))
        elif self.inp_merge == "mlp":
            return self.tf_out_act(self.merge(self.input_dropout(inp)))
        return self.merge(inp)


class TinyElectraModel(nn.Module):
    """Stand-in for transformers.ElectraModel: returns (last_hidden_state,)."""

    def __init__(self, d_model):
        super().__init__()
        self.layer = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU(), nn.Linear(d_model, d_model))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, inputs_embeds):
        return (self.norm(inputs_embeds + self.layer(inputs_embeds)),)


class RecSysTask:
    def __init__(self, pad_token=0):
        self.pad_token = pad_token

    def sample_from_softmax(self, logits):
        uniform_noise = torch.rand(logits.shape, dtype=logits.dtype)
        gumbel_noise = -torch.log(-torch.log(uniform_noise + 1e-9) + 1e-9)
        s = logits + gumbel_noise
        return torch.argmax(torch.softmax(s, dim=-1), -1)

    def get_fake_data(self, input_ids, target_flat, logits, sample_from_batch):
        # Replace only items that were masked during MLM
        non_pad_mask = target_flat != self.pad_token
        pos_labels = torch.masked_select(target_flat, non_pad_mask)
        if sample_from_batch:
            # get batch indices for replacement items
            batch_updates = self.sample_from_softmax(logits).flatten()
            updates = pos_labels[batch_updates]
        else:
            updates = self.sample_from_softmax(logits).flatten()
            batch_updates = []
        corrupted_labels = target_flat.scatter(-1, non_pad_mask.nonzero().flatten(), updates)
        discriminator_labels = (corrupted_labels != target_flat).view(-1, input_ids.size(1))
        corrupted_inputs = input_ids.view(-1).scatter(-1, non_pad_mask.nonzero().flatten(), updates)
        return corrupted_inputs.view(-1, input_ids.size(1)), discriminator_labels, batch_updates


class RecSysMetaModel(nn.Module):
    def __init__(self, item_cardinality=50, d_model=16, pad_token=0):
        super().__init__()
        self.pad_token = pad_token
        self.rtd = True
        self.rtd_sample_from_batch = True
        self.rtd_use_batch_interaction = True
        self.rtd_tied_generator = True
        self.rtd_discriminator_loss_weight = 50.0
        self.rtd_generator_loss_weight = 1.0
        self.item_embedding = nn.Embedding(item_cardinality, d_model, padding_idx=pad_token)
        self.tf_out_act = torch.tanh
        self.merge = ProjectionNetwork(d_model, d_model, "mlp", True, 0.0, self.tf_out_act)
        self.masked_item_embedding = nn.Parameter(torch.randn(d_model) * 0.01)
        self.model = TinyElectraModel(d_model)
        self.transformer_output_project = nn.Linear(d_model, d_model)
        self.output_layer = nn.Linear(d_model, item_cardinality)
        self.dense_discriminator = nn.Linear(d_model, d_model)
        self.discriminator_prediction = nn.Linear(d_model, 1)
        self.loss_nll = nn.NLLLoss(ignore_index=pad_token)

    def remove_pad_3d(self, inp_tensor, non_pad_mask):
        inp_tensor = inp_tensor.flatten(end_dim=1)
        inp_tensor_fl = torch.masked_select(inp_tensor, non_pad_mask.unsqueeze(1).expand_as(inp_tensor))
        return inp_tensor_fl.view(-1, inp_tensor.size(1))

    def forward(self, label_seq, label_mlm_mask, recsys_task):
        # label_seq_trg keeps only the masked positions as targets
        label_seq_trg = torch.where(label_mlm_mask, label_seq, torch.full_like(label_seq, self.pad_token))
        pos_emb = self.merge(self.item_embedding(label_seq))

        pos_emb_inp = torch.where(
            label_mlm_mask.unsqueeze(-1).bool(),
            self.masked_item_embedding.to(pos_emb.dtype),
            pos_emb,
        )
        model_outputs = self.model(inputs_embeds=pos_emb_inp)
        pos_emb_pred = model_outputs[0]
        pos_emb_pred = self.tf_out_act(self.transformer_output_project(pos_emb_pred))

        trg_flat = label_seq_trg.flatten()
        non_pad_mask = trg_flat != self.pad_token
        labels_all = torch.masked_select(trg_flat, non_pad_mask)
        pos_emb_pred = self.remove_pad_3d(pos_emb_pred, non_pad_mask)

        logits_all = self.output_layer(pos_emb_pred)
        predictions_all = F.log_softmax(logits_all, dim=-1)
        loss = self.loss_nll(predictions_all, labels_all)

        if self.rtd and self.training:
            # Step 1. Generate fake data using generator logits
            fake_inputs, discriminator_labels, batch_updates = recsys_task.get_fake_data(
                label_seq, trg_flat, logits_all[:, labels_all], self.rtd_sample_from_batch,
            )

            # Step 1.1 Build interaction embeddings using new replaced items
            if self.rtd_use_batch_interaction:
                replacement_interaction = pos_emb.view(-1, pos_emb.size(2))[batch_updates]
                fake_pos_emb = pos_emb.view(-1, pos_emb.size(2))
                fake_pos_emb[non_pad_mask.nonzero().flatten(), :] = replacement_interaction  # <-- IPL001
                fake_pos_emb = fake_pos_emb.view(pos_emb.shape)

            # Step 3. hidden representation of corrupted input
            fake_pos_emb_pred = self.model(inputs_embeds=fake_pos_emb)[0]
            # step 4. get logits for binary predictions
            fake_pos_emb_pred = self.dense_discriminator(fake_pos_emb_pred)
            fake_pos_emb_pred = self.tf_out_act(fake_pos_emb_pred)
            binary_logits = self.discriminator_prediction(fake_pos_emb_pred).squeeze(-1)
            non_pad_mask = label_seq != self.pad_token
            active_logits = binary_logits.view(-1, fake_pos_emb_pred.shape[1])[non_pad_mask]
            active_labels = discriminator_labels[non_pad_mask]
            discriminator_loss = nn.BCEWithLogitsLoss()(active_logits, active_labels.float())
            loss = (discriminator_loss * self.rtd_discriminator_loss_weight) + (loss * self.rtd_generator_loss_weight)

        return {"loss": loss, "predictions": logits_all}


def main():
    model = RecSysMetaModel()
    model.train()
    recsys_task = RecSysTask(pad_token=0)
    label_seq = torch.randint(1, 50, (4, 8))
    label_seq[0, 6:] = 0  # padded session tail
    label_mlm_mask = (torch.rand(4, 8) < 0.4) & (label_seq != 0)
    label_mlm_mask[:, 0] = True
    outputs = model(label_seq, label_mlm_mask, recsys_task)
    outputs["loss"].backward()
    return outputs["loss"].detach(), model.merge.merge.weight.grad, model.item_embedding.weight.grad


loss, merge_grad, item_emb_grad = main()
