package e2e

import (
	"context"
	"log"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// MarkReplicaSetsAvailable plays kubelet + ReplicaSet controller for the
// Rollout controller, which reads only ReplicaSet status (not Pods): every
// ReplicaSet's status is set to "all spec.replicas pods exist, are ready and
// available" for its current generation. It runs until ctx ends.
//
// kube-controller-manager must not run beside it: its ReplicaSet controller
// would reset the status to the (zero) pods that really exist.
func (c *Cluster) MarkReplicaSetsAvailable(ctx context.Context) {
	// The resync re-offers every ReplicaSet, retrying any failed update.
	f := informers.NewSharedInformerFactory(c.Kube, 5*time.Second)
	inf := f.Apps().V1().ReplicaSets().Informer()
	handle := func(obj any) {
		if rs, ok := obj.(*appsv1.ReplicaSet); ok && !replicaSetSettled(rs) {
			c.settleReplicaSet(ctx, rs.Namespace, rs.Name)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
	})
	f.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		f.Shutdown()
	}()
}

func replicaSetSettled(rs *appsv1.ReplicaSet) bool {
	want := int32(1)
	if rs.Spec.Replicas != nil {
		want = *rs.Spec.Replicas
	}
	s := rs.Status
	return s.ObservedGeneration >= rs.Generation && s.Replicas == want && s.FullyLabeledReplicas == want &&
		s.ReadyReplicas == want && s.AvailableReplicas == want
}

func (c *Cluster) settleReplicaSet(ctx context.Context, ns, name string) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rs, err := c.Kube.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if replicaSetSettled(rs) {
			return nil
		}
		want := int32(1)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		rs.Status.Replicas = want
		rs.Status.FullyLabeledReplicas = want
		rs.Status.ReadyReplicas = want
		rs.Status.AvailableReplicas = want
		rs.Status.ObservedGeneration = rs.Generation
		_, err = c.Kube.AppsV1().ReplicaSets(ns).UpdateStatus(ctx, rs, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		log.Printf("e2e: settle replicaset %s/%s: %v (retried at the next resync)", ns, name, err)
	}
}
